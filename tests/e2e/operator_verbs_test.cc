// The operator's verbs end to end: `pause` and `resume` are one command each, in a checkout of
// the profile repository, and each leaves a commit saying who (the person's Git identity) and
// why (--reason); the daemon holds a new version while paused and rolls it out once resumed.
#include <fstream>
#include <sstream>

#include "tests/e2e/e2e_fixture.h"
#include "tests/support/process.h"

namespace tr::e2e {
namespace {

using core::ClusterPhase;
using gitsource::testing::RunCommand;
namespace fs = std::filesystem;

const std::string kReconciler = std::string(TR_BINARY_DIR) + "/reconciler/talos-reconciler";

std::string VerbsProfileText(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(E2eTest, PauseAndResumeAreOneCommandEachAndLeaveACommitSayingWhoAndWhy) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("hold", 1, 1, "1.11.6")}));
  world().PushProfiles({{"hold", AtTalos("1.11.6", {"settle: 1s"})}}, "initial profile");
  E2E_ASSERT_OK(world().StartDaemon());
  E2E_ASSERT_OK(world()
                    .WaitForStatus(
                        "hold", [](const core::ClusterStatus& s) { return s.phase == ClusterPhase::kReady; },
                        60s)
                    .status());
  const fs::path work = world().repo().bare().parent_path() / "fleet-work";
  auto git = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"git", "-C", work.string()});
    const auto r = RunCommand(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return r.out;
  };
  // Whoever runs the verb, as Git knows them (the test environment sets an identity).
  std::string who = git({"var", "GIT_AUTHOR_IDENT"});
  who = who.substr(0, who.find('>') + 1);
  ASSERT_FALSE(who.empty());
  git({"branch", "--quiet", "--set-upstream-to=origin/main", "main"});

  auto verb = [&](const std::string& name, const std::string& reason) {
    const auto r = RunCommand({kReconciler, name, "hold", "--reason", reason, "--dir",
                               work.string(), "--push"});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  };
  verb("pause", "change freeze for the release");
  // While paused, a new version waits: nothing is touched.
  const std::string profile = ProfilePath("hold");
  std::string text = VerbsProfileText(work / profile);
  ASSERT_NE(text.find("1.11.6"), std::string::npos) << text;
  text.replace(text.find("1.11.6"), 6, "1.12.0");
  std::ofstream(work / profile) << text;
  git({"commit", "--quiet", "-am", "hold: Talos 1.12.0"});
  git({"push", "--quiet"});
  const std::string bump = git({"rev-parse", "HEAD"}).substr(0, 40);
  const uint64_t since = LastSeq(world().Journal());
  E2E_ASSERT_OK(world()
                    .WaitForStatus(
                        "hold",
                        [&](const core::ClusterStatus& s) {
                          return s.desired_commit_attempted == bump &&
                                 s.phase == ClusterPhase::kPaused;
                        },
                        60s)
                    .status());
  EXPECT_TRUE(TouchedNodes(world().Journal(), "hold", since).empty());

  verb("resume", "release shipped");
  const std::string resumed = git({"rev-parse", "HEAD"}).substr(0, 40);
  E2E_ASSERT_OK(world().WaitForReady("hold", "1.12.0", resumed, 120s).status());

  // The trace in Git: who and why, one commit per verb.
  const std::string log = git({"log", "--format=%an <%ae>: %s", "-4"});
  EXPECT_THAT(log, ::testing::HasSubstr(who + ": resume hold: release shipped"));
  EXPECT_THAT(log, ::testing::HasSubstr(who + ": pause hold: change freeze for the release"));
}

}  // namespace
}  // namespace tr::e2e
