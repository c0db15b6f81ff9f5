// `status` reads what the status store wrote, from a real repository through libgit2.
#include "reconciler/app/status_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "core/timestamp.h"
#include "gitsource/git_source.h"
#include "reconciler/loop/status_store.h"

namespace tr::reconciler {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(StatusCommandTest, PrintsWhatTheDaemonRecorded) {
  const fs::path dir = fs::temp_directory_path() / ("tr-status-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string repo = (dir / "repo.git").string();
  const std::string setup = "git init -q --bare " + repo + " && git -C " + dir.string() +
                            " init -q work && cd " + (dir / "work").string() +
                            " && git -c user.name=t -c user.email=t@t commit -q --allow-empty "
                            "-m init && git push -q " +
                            repo + " HEAD:refs/heads/main";
  ASSERT_EQ(std::system(setup.c_str()), 0);

  gitsource::GitSourceConfig git;
  git.remote.url = "file://" + repo;
  git.state_dir = dir / "daemon";
  ASSERT_TRUE(gitsource::ConfigureLibgit2().ok());
  auto source = gitsource::LibGitSource::Open(git, Env::Default());
  ASSERT_TRUE(source.ok()) << source.status();
  auto writer = gitsource::GitStatusWriter::Create(**source, {}, Env::Default());
  ASSERT_TRUE(writer.ok()) << writer.status();
  GitStatusStore store(**writer);
  core::ClusterStatus status;
  status.cluster = "prod-eu-1";
  status.phase = core::ClusterPhase::kUpgradingTalos;
  status.message = "upgrading w-1 (2/5) to Talos 1.12.0";
  status.updated = *core::ParseTimestamp("2026-11-22T03:00:00Z");
  status.talos = {"1.11.6", "1.12.0", "1.13.9", core::ComponentState::kInProgress, "", "2/5"};
  ASSERT_TRUE(store.Record(status, {}).ok());

  StatusCommandOptions options;
  options.git = git;
  options.git.state_dir.clear();  // a one-off read needs no state directory
  std::ostringstream out, err;
  ASSERT_EQ(RunStatus(options, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), testing::StartsWith("CLUSTER "));
  EXPECT_THAT(out.str(), HasSubstr("PHASE"));
  EXPECT_THAT(out.str(), HasSubstr("REVISION"));
  EXPECT_THAT(out.str(), testing::ContainsRegex(
                             "prod-eu-1 +UpgradingTalos +1.11.6→1.12.0 .* 2/5 .*upgrading w-1"));
  options.output = "json";
  std::ostringstream json;
  ASSERT_EQ(RunStatus(options, json, err), 0) << err.str();
  EXPECT_THAT(json.str(), HasSubstr("\"phase\": \"UpgradingTalos\""));
  options.output = "yaml";
  std::ostringstream yaml;
  ASSERT_EQ(RunStatus(options, yaml, err), 0) << err.str();
  EXPECT_THAT(yaml.str(), testing::StartsWith("apiVersion: \"talos-reconciler.dev/v1alpha1\"\n"
                                              "kind: \"StatusReport\"\n"
                                              "clusters:\n  - name: \"prod-eu-1\"\n"));
  EXPECT_THAT(yaml.str(), HasSubstr("    phase: \"UpgradingTalos\"\n"));
  options.output = "markdown";
  std::ostringstream markdown;
  ASSERT_EQ(RunStatus(options, markdown, err), 0) << err.str();
  EXPECT_THAT(markdown.str(), HasSubstr("| `prod-eu-1` | UpgradingTalos | 1.11.6 → 1.12.0 |"));

  options.output = "text";
  options.cluster = "prod-eu-1";
  std::ostringstream one;
  ASSERT_EQ(RunStatus(options, one, err), 0) << err.str();
  EXPECT_THAT(one.str(), testing::StartsWith("Cluster     prod-eu-1\n"));
  EXPECT_THAT(one.str(), HasSubstr("\nNodes\n"));
  options.cluster = "nope";
  std::ostringstream none, none_err;
  EXPECT_EQ(RunStatus(options, none, none_err), 1);
  EXPECT_THAT(none_err.str(), HasSubstr("no status for cluster nope"));

  options.cluster.clear();
  options.status_branch = "no-such-branch";
  std::ostringstream missing, missing_err;
  EXPECT_EQ(RunStatus(options, missing, missing_err), 1);
  EXPECT_THAT(missing_err.str(), HasSubstr("the status branch no-such-branch does not exist"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tr::reconciler
