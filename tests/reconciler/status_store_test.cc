// The status store reading a real status branch (libgit2, a file:// remote) that someone with
// push access has made hostile: files that are no status, or another cluster's, are skipped
// and counted, and the other clusters' statuses still load (the daemon starts).
#include "reconciler/loop/status_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/status_yaml.h"
#include "fmt/format.h"
#include "gitsource/git_source.h"
#include "reconciler/app/status_command.h"
#include "reconciler/loop/source_poller.h"
#include "tests/support/process.h"
#include "tests/support/repos.h"

namespace tr::reconciler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::_;

constexpr char kStatusBranch[] = "talos-reconciler/status";

core::ClusterStatus StatusOf(const std::string& cluster) {
  core::ClusterStatus status;
  status.cluster = cluster;
  status.phase = core::ClusterPhase::kReady;
  status.message = "up to date";
  return status;
}

std::string Data(const std::string& content) {
  return fmt::format("data {}\n{}\n", content.size(), content);
}

class StatusStoreTest : public testing::Test {
 protected:
  StatusStoreTest() {
    upstream_.Commit({{"clusters/prod.yaml", "kind: ClusterProfile\n"}}, "initial");
    git_.remote.url = "file://" + upstream_.bare().string();
    git_.state_dir = tmp_ / "state";
  }

  // Records the two real clusters, then adds what an attacker pushed on top.
  void RecordThenVandalise() {
    auto source = gitsource::LibGitSource::Open(git_, Env::Default());
    ASSERT_TRUE(source.ok()) << source.status();
    auto writer = gitsource::GitStatusWriter::Create(**source, {}, Env::Default());
    ASSERT_TRUE(writer.ok()) << writer.status();
    GitStatusStore store(**writer);
    ASSERT_TRUE(store.Record(StatusOf("prod-eu-1"), {}).ok());
    ASSERT_TRUE(store.Record(StatusOf("edge"), {}).ok());
    upstream_.FastImport(fmt::format(
        "commit refs/heads/{0}\ncommitter Mallory <m@example.com> 1700000000 +0000\n{1}"
        "from refs/heads/{0}^0\n"
        "M 100644 inline status/zz.yaml\n{2}"
        "M 100644 inline status/alpha.yaml\n{3}"
        "M 100644 inline status/Not_A_Name.yaml\n{4}\n",
        kStatusBranch, Data("vandalism"), Data("\x01zz:["),
        Data(core::RenderStatusYaml(StatusOf("beta"))),
        Data(core::RenderStatusYaml(StatusOf("Not_A_Name")))));
  }

  gitsource::testing::TempDir tmp_;
  gitsource::testing::UpstreamRepo upstream_{tmp_ / "served", "profiles"};
  gitsource::GitSourceConfig git_;
};

TEST_F(StatusStoreTest, FilesThatAreNoClustersStatusAreSkippedAndCounted) {
  RecordThenVandalise();
  git_.state_dir = tmp_ / "restarted";
  auto source = gitsource::LibGitSource::Open(git_, Env::Default());
  ASSERT_TRUE(source.ok()) << source.status();
  auto writer = gitsource::GitStatusWriter::Create(**source, {}, Env::Default());
  ASSERT_TRUE(writer.ok()) << writer.status();
  Metrics metrics;
  GitStatusStore store(**writer, &metrics);
  // What the daemon does at start: it used to exit with "cannot read back status/zz.yaml".
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> loaded =
      LoadStatusesAtStart(store, {}, Env::Default(), {});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(*loaded, ElementsAre(Pair("edge", _), Pair("prod-eu-1", _)));
  EXPECT_EQ(metrics.status_files_skipped.Value("undecodable"), 1u);
  EXPECT_EQ(metrics.status_files_skipped.Value("name_mismatch"), 1u);
  EXPECT_EQ(metrics.status_files_skipped.Value("no_cluster"), 1u);
  EXPECT_THAT(metrics.RenderPrometheus(),
              HasSubstr("talos_reconciler_status_files_skipped_total{reason=\"undecodable\"} 1\n"));
}

// A planted wide tree is one refused read (one error, one count), nothing is recorded onto it,
// and once the planted names are removed the real clusters' statuses read back whole.
TEST_F(StatusStoreTest, AWideTreeIsRefusedWholeAndLosesNothing) {
  auto source = gitsource::LibGitSource::Open(git_, Env::Default());
  ASSERT_TRUE(source.ok()) << source.status();
  gitsource::StatusWriterConfig config;
  config.read_limits.max_files = 10;
  auto writer = gitsource::GitStatusWriter::Create(**source, config, Env::Default());
  ASSERT_TRUE(writer.ok()) << writer.status();
  Metrics metrics;
  GitStatusStore store(**writer, &metrics);
  ASSERT_TRUE(store.Record(StatusOf("prod-eu-1"), {}).ok());
  ASSERT_TRUE(store.Record(StatusOf("edge"), {}).ok());
  std::string planted;
  for (int i = 0; i < 50; ++i) planted += fmt::format("M 100644 :1 status/w{:03}.yaml\n", i);
  const std::string wide = fmt::format(
      "blob\nmark :1\n{1}commit refs/heads/{0}\n"
      "committer Mallory <m@example.com> 1700000000 +0000\n{2}from refs/heads/{0}^0\n{3}\n",
      kStatusBranch, Data("x"), Data("wide"), planted);
  upstream_.FastImport(wide);

  absl::StatusOr<std::map<std::string, core::ClusterStatus>> loaded = store.LoadAll({});
  ASSERT_FALSE(loaded.ok());
  EXPECT_TRUE(gitsource::IsStatusTreeOverBudget(loaded.status())) << loaded.status();
  EXPECT_EQ(metrics.status_files_skipped.Value("too_many"), 1u);
  const std::string tip = upstream_.Tip(kStatusBranch);
  core::ClusterStatus changed = StatusOf("edge");
  changed.message = "changed";
  EXPECT_TRUE(gitsource::IsStatusTreeOverBudget(store.Record(changed, {})));
  EXPECT_EQ(upstream_.Tip(kStatusBranch), tip);

  upstream_.FastImport(fmt::format(
      "commit refs/heads/{0}\ncommitter Ops <o@example.com> 1700000001 +0000\n{1}"
      "from refs/heads/{0}^0\nD status/w000.yaml\n{2}\n",
      kStatusBranch, Data("clean up"), [] {
        std::string lines;
        for (int i = 1; i < 50; ++i) lines += fmt::format("D status/w{:03}.yaml\n", i);
        return lines;
      }()));
  loaded = store.LoadAll({});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(*loaded, ElementsAre(Pair("edge", _), Pair("prod-eu-1", _)));
}

TEST_F(StatusStoreTest, DecodeStatusFilesSaysWhyEachFileWasSkipped) {
  gitsource::StatusFiles files;
  files.files["status/zz.yaml"] = "\x01zz:[";
  files.files["status/alpha.yaml"] = core::RenderStatusYaml(StatusOf("beta"));
  files.files["status/edge.yaml"] = core::RenderStatusYaml(StatusOf("edge"));
  files.files["status/nested.d/x.yaml"] = core::RenderStatusYaml(StatusOf("x"));
  files.files["status/notes.txt"] = "not a status, not counted";
  files.skipped.push_back({"status/big.yaml", "too_large", "2000000 bytes"});
  DecodedStatuses decoded = DecodeStatusFiles(files);
  EXPECT_THAT(decoded.statuses, ElementsAre(Pair("edge", _)));
  std::vector<std::string> reasons;
  for (const gitsource::SkippedStatusFile& s : decoded.skipped) {
    reasons.push_back(s.path + " " + s.reason);
  }
  EXPECT_THAT(reasons, ElementsAre("status/big.yaml too_large", "status/alpha.yaml name_mismatch",
                                   "status/nested.d/x.yaml no_cluster",
                                   "status/zz.yaml undecodable"));
  EXPECT_EQ(decoded.skipped[1].detail, "the file is named for alpha but says cluster beta");
}

TEST_F(StatusStoreTest, TheStatusCommandWarnsAndShowsTheOtherClusters) {
  RecordThenVandalise();
  StatusCommandOptions options;
  options.git = git_;
  options.git.state_dir.clear();
  std::ostringstream out, err;
  ASSERT_EQ(RunStatus(options, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("prod-eu-1"));
  EXPECT_THAT(out.str(), HasSubstr("edge"));
  EXPECT_THAT(err.str(), HasSubstr("warning: skipped status/zz.yaml (undecodable)"));
  EXPECT_THAT(err.str(), HasSubstr("warning: skipped status/alpha.yaml (name_mismatch)"));
}

}  // namespace
}  // namespace tr::reconciler
