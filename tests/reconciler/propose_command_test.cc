#include "reconciler/features/proposals/propose_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/timestamp.h"
#include "nlohmann/json.hpp"
#include "reconciler/features/proposals/proposer.h"
#include "reconciler/runtime/windows.h"

namespace tr::reconciler::proposals {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kProposeExamples = fs::path(TR_SOURCE_DIR) / "examples";

// examples/repo with an `updates` policy added to its reconciler.yaml.
class PolicyRepo {
 public:
  explicit PolicyRepo(const std::string& updates) {
    dir_ = fs::temp_directory_path() /
           ("tr-propose-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::copy(kProposeExamples / "repo", dir_, fs::copy_options::recursive);
    std::ofstream(dir_ / "reconciler.yaml", std::ios::app) << "updates:\n" << updates;
  }
  ~PolicyRepo() { fs::remove_all(dir_); }
  const fs::path& dir() const { return dir_; }

 private:
  static inline int counter_ = 0;
  fs::path dir_;
};

ProposeOptions Options(const fs::path& dir, ProposeFormat format) {
  ProposeOptions options;
  options.input.dir = dir;
  options.input.observed_file = kProposeExamples / "observed.yaml";
  options.format = format;
  options.dry_run = true;
  return options;
}

TEST(ProposeCommandTest, PrintsTheFirstHopOfAClusterTwoMinorsBehindAndWhyOthersWait) {
  PolicyRepo repo("  talos: minor\n");
  std::ostringstream out, err;
  ASSERT_EQ(RunPropose(Options(repo.dir(), ProposeFormat::kText), Env::Default(), out, err),
            kExitOk)
      << err.str();
  // edge-lab runs 1.11.6; the catalog has 1.12.0 and 1.13.9: one minor at a time.
  EXPECT_THAT(out.str(), HasSubstr("talos-reconciler/update/edge-lab: Upgrade edge-lab to Talos "
                                   "1.12.0\n  edge-lab (clusters/edge-lab.yaml) Talos 1.11.6 → "
                                   "1.12.0\n"));
  EXPECT_THAT(out.str(), HasSubstr("prod-eu-1: no proposal: waiting: prod-eu-1 runs Talos 1.11.6"));
}

TEST(ProposeCommandTest, JsonHasTheDocumentedShape) {
  PolicyRepo repo("  talos: minor\n");
  std::ostringstream out, err;
  ASSERT_EQ(RunPropose(Options(repo.dir(), ProposeFormat::kJson), Env::Default(), out, err),
            kExitOk)
      << err.str();
  const nlohmann::json json = nlohmann::json::parse(out.str());
  EXPECT_EQ(json["apiVersion"], "talos-reconciler.dev/v1alpha1");
  EXPECT_EQ(json["kind"], "ProposalReport");
  EXPECT_EQ(json.size(), 4u) << "a new key is recorded in CHANGELOG.md";
  ASSERT_EQ(json["proposals"].size(), 1u);
  const nlohmann::json& p = json["proposals"][0];
  EXPECT_EQ(p["branch"], "talos-reconciler/update/edge-lab");
  EXPECT_EQ(p["clusters"], nlohmann::json::array({"edge-lab"}));
  EXPECT_EQ(p["talos"], (nlohmann::json{{"from", "1.11.6"}, {"to", "1.12.0"}}));
  EXPECT_TRUE(p["kubernetes"].is_null());
  EXPECT_EQ(p["title"], "Upgrade edge-lab to Talos 1.12.0");
  EXPECT_EQ(json["skipped"].size(), 2u);
}

TEST(ProposeCommandTest, AnInvalidPolicyProposesNothing) {
  PolicyRepo repo("  talos: sometimes\n");
  std::ostringstream out, err;
  EXPECT_EQ(RunPropose(Options(repo.dir(), ProposeFormat::kText), Env::Default(), out, err),
            kExitInvalid);
  EXPECT_THAT(err.str(), HasSubstr("updates.talos: must be none, patch or minor"));
  EXPECT_THAT(err.str(), HasSubstr("nothing is proposed while a profile or reconciler.yaml is "
                                   "invalid"));
  EXPECT_EQ(out.str(), "");
}

core::Proposal ChainProposal() {
  core::Proposal p;
  p.group = "lab";
  p.branch = "talos-reconciler/update/lab";
  p.title = "Upgrade lab, prod to Talos 1.12.3";
  p.talos =
      core::VersionChange{*core::ParseTalosVersion("1.12.0"), *core::ParseTalosVersion("1.12.3")};
  p.clusters = {{.name = "lab", .file = "clusters/lab.yaml", .talos = p.talos, .kubernetes = {}},
                {.name = "prod", .file = "clusters/prod.yaml", .talos = p.talos, .kubernetes = {}}};
  p.group_clusters = {"lab", "prod"};
  return p;
}

TEST(ProposalBodyTest, NamesTheVersionsTheClustersAndTheReleaseNotes) {
  const std::string body = ProposalBody(ChainProposal(), "### plan\n");
  EXPECT_TRUE(
      body.starts_with("<!-- talos-reconciler:proposal group=lab talos=1.12.3 kubernetes=- -->\n"));
  EXPECT_THAT(body, HasSubstr("(group `lab`: lab → prod)"));
  EXPECT_THAT(body, HasSubstr("| prod | `clusters/prod.yaml` | 1.12.0 → 1.12.3 | unchanged |"));
  EXPECT_THAT(body, HasSubstr("[Talos 1.12.3](https://github.com/siderolabs/talos/releases/tag/"
                              "v1.12.3)"));
  EXPECT_TRUE(body.ends_with("\n### plan\n"));
}

core::TimePoint At(const char* text) { return *core::ParseTimestamp(text); }

TEST(ScheduleFiresBetweenTest, LocalMinutesOfTheScheduleZone) {
  // 06:00 on weekdays in Berlin: 04:00 UTC in summer (CEST, +2).
  const core::UpdateSchedule berlin{*core::CronSchedule::Parse("0 6 * * 1-5"), "Europe/Berlin"};
  EXPECT_TRUE(ScheduleFiresBetween(berlin, At("2026-06-15T03:59:00Z"), At("2026-06-15T04:00:00Z")));
  EXPECT_FALSE(
      ScheduleFiresBetween(berlin, At("2026-06-15T04:00:00Z"), At("2026-06-15T04:10:00Z")));
  // Saturday: no weekday matches.
  EXPECT_FALSE(
      ScheduleFiresBetween(berlin, At("2026-06-13T00:00:00Z"), At("2026-06-13T23:59:00Z")));
  // A long gap (a restart) still sees the firing within it.
  EXPECT_TRUE(ScheduleFiresBetween(berlin, At("2026-06-12T12:00:00Z"), At("2026-06-15T12:00:00Z")));
  const core::UpdateSchedule unknown{*core::CronSchedule::Parse("* * * * *"), "Mars/Olympus"};
  EXPECT_FALSE(
      ScheduleFiresBetween(unknown, At("2026-06-15T03:00:00Z"), At("2026-06-15T04:00:00Z")));
}

}  // namespace
}  // namespace tr::reconciler::proposals
