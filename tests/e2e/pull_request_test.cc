// The pull request loop end to end: the real daemon with --forge github against the fake forge
// (which checks every request against GitHub's REST description), talos-sim and git daemon.
// A pull request is a ref (refs/pull/7/head) plus its signed webhook: the daemon plans it into
// one comment and a commit status; a fix pushed to the pull request edits the same comment;
// the merge rolls out, and progress and the result land in that comment with the rollout
// status on the merge commit. A secondary rate limit (403 + retry-after) is injected midway.
#include <gmock/gmock.h>

#include <fstream>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/signed_webhook.h"
#include "tests/support/fake_forge.h"
#include "tests/support/process.h"

namespace tr::e2e {
namespace {

using forge_test::FakeForge;
using forge_test::FakeStatus;

constexpr char kForgeToken[] = "ghp_e2eForgeTokenNeverInTheLog";
constexpr char kSecret[] = "e2e-pr-webhook-secret";

class PullRequestLoop {
 public:
  PullRequestLoop(E2eWorld& world, std::string hooks_url)
      : world_(world),
        hooks_url_(std::move(hooks_url)),
        work_(world.repo().bare().parent_path() / "fleet-work") {}

  std::string Git(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"git", "-C", work_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    std::string out = gitsource::testing::MustRun(argv);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  // Commits `profile` for the cluster on the pull request's branch and pushes its head ref.
  std::string PushHead(const std::string& cluster, const std::string& profile) {
    Git({"checkout", "-q", "-B", "pr-7"});
    std::ofstream(work_ / ("clusters/" + cluster + ".yaml")) << profile;
    Git({"commit", "-q", "-am", "pr 7: " + cluster});
    Git({"push", "-q", "-f", "origin", "HEAD:refs/pull/7/head"});
    return Git({"rev-parse", "HEAD"});
  }

  int Webhook(const std::string& action, const std::string& head, bool merged = false,
              const std::string& merge_commit = "") {
    nlohmann::json pr{{"head", {{"sha", head}}}, {"base", {{"ref", "main"}}}, {"merged", merged}};
    pr["merge_commit_sha"] = merge_commit.empty() ? nlohmann::json() : nlohmann::json(merge_commit);
    const auto payload = world_.dir() / ("pr-" + action + ".json");
    std::ofstream(payload) << nlohmann::json{
        {"action", action},
        {"number", 7},
        {"pull_request", pr}}.dump();
    const std::vector<int> statuses =
        SendGithubWebhook(hooks_url_, kSecret, "pull_request", payload);
    return statuses.size() == 1 ? statuses[0] : 0;
  }

 private:
  E2eWorld& world_;
  std::string hooks_url_;
  std::filesystem::path work_;
};

bool HasState(const std::vector<FakeStatus>& statuses, const std::string& context,
              const std::string& state) {
  return std::any_of(statuses.begin(), statuses.end(),
                     [&](const FakeStatus& s) { return s.context == context && s.state == state; });
}

TEST_F(E2eTest, PullRequestIsPlannedInOneCommentAndItsMergeReportsTheRollout) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("pr", 1, 1, "1.11.6")}));
  world().PushProfiles({{"pr", AtTalos("1.11.6", {"settle: 0s"})}}, "initial profile");
  const std::string host = world().sim().address_prefix() + ".252";
  auto port = FreePort(host);
  E2E_ASSERT_OK(port.status());
  std::ofstream(world().dir() / "webhook-secret") << kSecret << "\n";
  std::ofstream(world().dir() / "forge-token") << kForgeToken << "\n";
  FakeForge forge("github", "acme/fleet", kForgeToken);
  E2E_ASSERT_OK(world().StartDaemon([&](DaemonOptions& o) {
    o.poll_interval = "1h";
    o.extra_args = {"--webhook-listen",
                    fmt::format("{}:{}", host, *port),
                    "--webhook-secret-file",
                    (world().dir() / "webhook-secret").string(),
                    "--forge",
                    "github",
                    "--forge-api-url",
                    forge.api_url(),
                    "--forge-token-file",
                    (world().dir() / "forge-token").string(),
                    "--forge-repository",
                    "acme/fleet",
                    "--forge-comment-interval",
                    "200ms"};
  }));
  E2E_ASSERT_OK(world().WaitForReady("pr", "1.11.6", "", 60s).status());
  PullRequestLoop loop(world(), fmt::format("http://{}:{}", host, *port));
  const auto& cluster = world().sim().cluster("pr");

  // Opened with an invalid profile: a failure status and a comment naming the problem.
  const std::string bad =
      loop.PushHead("pr", ProfileYaml(cluster, AtTalos("1.12.0", {"settle: soon"})));
  EXPECT_EQ(loop.Webhook("opened", bad), 202);
  ASSERT_TRUE(world().WaitUntil(60s,
                                [&] {
                                  return HasState(forge.Statuses(bad), "talos-reconciler/plan",
                                                  "failure") &&
                                         forge.Comments(7).size() == 1;
                                }))
      << testing::PrintToString(forge.Requests()) << world().Diagnostics();
  EXPECT_THAT(forge.Comments(7)[0].body, testing::HasSubstr("settle"));

  // A fix pushed to the pull request, with a secondary rate limit on the way: the same comment.
  forge.Inject(
      {403, {{"retry-after", "1"}}, R"({"message":"You have exceeded a secondary rate limit."})"});
  const std::string good =
      loop.PushHead("pr", ProfileYaml(cluster, AtTalos("1.12.0", {"settle: 0s"})));
  EXPECT_EQ(loop.Webhook("synchronize", good), 202);
  ASSERT_TRUE(world().WaitUntil(
      60s,
      [&] {
        const auto comments = forge.Comments(7);
        return HasState(forge.Statuses(good), "talos-reconciler/plan", "success") &&
               comments.size() == 1 &&
               comments[0].body.find(good.substr(0, 12)) != std::string::npos;
      }))
      << testing::PrintToString(forge.Requests()) << world().Diagnostics();
  EXPECT_EQ(forge.InjectedLeft(), 0u);  // the 403 was met, waited out and retried
  EXPECT_GE(forge.Comments(7)[0].edits, 1);
  EXPECT_THAT(forge.Comments(7)[0].body, testing::HasSubstr("1.12.0"));

  // Merged: the rollout is reported in the same comment and on the merge commit.
  loop.Git({"checkout", "-q", "main"});
  loop.Git({"merge", "-q", "--no-ff", "pr-7", "-m", "Merge pull request #7"});
  loop.Git({"push", "-q", "origin", "main"});
  const std::string merge = loop.Git({"rev-parse", "HEAD"});
  EXPECT_EQ(loop.Webhook("closed", good, /*merged=*/true, merge), 202);
  E2E_ASSERT_OK(world().WaitForReady("pr", "1.12.0", merge, 120s).status());
  ASSERT_TRUE(world().WaitUntil(
      60s,
      [&] {
        const auto comments = forge.Comments(7);
        return HasState(forge.Statuses(merge), "talos-reconciler/rollout", "success") &&
               comments.size() == 1 && comments[0].body.find("succeeded") != std::string::npos;
      }))
      << testing::PrintToString(forge.Requests()) << world().Diagnostics();
  const auto rollout = forge.Statuses(merge);
  ASSERT_FALSE(rollout.empty());
  EXPECT_EQ(rollout.front().state, "pending");
  EXPECT_EQ(rollout.back().state, "success");
  EXPECT_THAT(forge.Comments(7)[0].body, testing::HasSubstr("Rollout of " + merge.substr(0, 12)));
  EXPECT_TRUE(forge.Violations().empty());
  EXPECT_EQ(world().daemon().log().find(kForgeToken), std::string::npos);
}

}  // namespace
}  // namespace tr::e2e
