// The pull request loop end to end: the real daemon with --forge github against the fake forge
// (which checks every request against GitHub's REST description), talos-sim and git daemon.
// A pull request is a ref (refs/pull/7/head) plus its signed webhook: the daemon plans it into
// one comment and a commit status; a fix pushed to the pull request edits the same comment;
// the merge rolls out, and progress and the result land in that comment with the rollout
// status on the merge commit. A secondary rate limit (403 + retry-after) is injected midway.
#include <gmock/gmock.h>
#include <time.h>

#include <chrono>
#include <fstream>
#include <iostream>

#include "base/env.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/pull_request_loop.h"
#include "tests/e2e/signed_webhook.h"
#include "tests/support/e2e/process_usage.h"
#include "tests/support/fake_forge.h"
#include "tests/support/process.h"

namespace tr::e2e {
namespace {

// A maintenance window that is closed now and for the next day: two days ahead, in UTC.
std::string ClosedWindowPolicy() {
  const time_t t = std::chrono::system_clock::to_time_t(Env::Default().Now());
  tm utc{};
  gmtime_r(&t, &utc);
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  return fmt::format("windows: [{{days: [{}], start: \"00:00\", duration: 1h, timezone: UTC}}]",
                     kDays[(utc.tm_wday + 2) % 7]);
}

// The daemon watching `main` with --forge `forge` against the fake; the hooks' base URL. With
// `held`, a second cluster "held" wants 1.12.0 but waits for a closed window throughout.
absl::StatusOr<std::string> StartWithForge(E2eWorld& world, const std::string& forge,
                                           const FakeForge& fake, bool held = false) {
  std::vector<ClusterDef> clusters = {MakeCluster("pr", 1, 1, "1.11.6")};
  std::map<std::string, ProfileDef> profiles = {{"pr", AtTalos("1.11.6", {"settle: 0s"})}};
  if (held) {
    clusters.push_back(MakeCluster("held", 1, 0, "1.11.6"));
    profiles.emplace("held", AtTalos("1.12.0", {ClosedWindowPolicy()}));
  }
  return StartFleetWithForge(world, forge, fake, clusters, profiles, {"pr", "1.11.6"});
}

TEST_F(E2eTest, PullRequestIsPlannedInOneCommentAndItsMergeReportsTheRollout) {
  FakeForge forge("github", "acme/fleet", kForgeToken);
  std::string hooks;
  E2E_ASSERT_OK_AND_ASSIGN(hooks, StartWithForge(world(), "github", forge));
  PullRequestLoop loop(world(), "github", hooks);
  const auto& cluster = world().sim().cluster("pr");

  // Opened with an invalid profile: a failure status and a comment naming the problem.
  const std::string bad =
      loop.PushHead("pr", ProfileYaml(cluster, AtTalos("1.12.0", {"settle: soon"})));
  EXPECT_EQ(loop.Webhook("opened", bad), 202);
  ASSERT_TRUE(forge.WaitFor(60s,
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
  ASSERT_TRUE(forge.WaitFor(
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
  const std::string merge = loop.Merge();
  EXPECT_EQ(loop.Webhook("closed", good, /*merged=*/true, merge), 202);
  // Killed as the merge arrives (a rollout takes seconds, so the new process reports all of
  // it): it learns the merged pull request from the forge, as the webhook went to the old
  // one, and reads the plan back from the comment to keep it above the rollout's result.
  forge.SetMergedPull(merge, 7);
  world().daemon().Kill();
  E2E_ASSERT_OK(world().daemon().Start());
  E2E_ASSERT_OK(world().WaitForReady("pr", "1.12.0", merge, 120s).status());
  ASSERT_TRUE(forge.WaitFor(
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
  EXPECT_THAT(forge.Comments(7)[0].body, testing::HasSubstr("## Plan for " + good.substr(0, 12)));
  // The scope, read back by whichever process reports the rollout.
  EXPECT_THAT(forge.Comments(7)[0].body,
              testing::HasSubstr("<!-- talos-reconciler:changes pr -->\n## Plan for "));
  EXPECT_THAT(forge.Requests(), testing::Contains(testing::HasSubstr(merge + "/pulls")));
  EXPECT_TRUE(forge.Violations().empty());
  EXPECT_EQ(world().daemon().log().find(kForgeToken), std::string::npos);
}

// Two pull requests merged one after the other for one cluster (issue 48): #7 takes it to
// Talos 1.12.0, and once that rollout succeeded #8 takes it on to 1.13.9. Each pull request
// ends with its own final status and comment: #7's merge commit never goes back to pending,
// its comment stays "succeeded" on its own versions, and #8 reports its own rollout.
TEST_F(E2eTest, BackToBackMergesEachEndWithTheirOwnFinalReport) {
  FakeForge forge("github", "acme/fleet", kForgeToken);
  std::string hooks;
  E2E_ASSERT_OK_AND_ASSIGN(hooks, StartWithForge(world(), "github", forge));
  const auto& cluster = world().sim().cluster("pr");
  auto rollout_states = [&](const std::string& commit) {
    std::vector<std::string> states;
    for (const FakeStatus& s : forge.Statuses(commit)) {
      if (s.context == "talos-reconciler/rollout") states.push_back(s.state);
    }
    return states;
  };
  auto merge = [&](int number, const std::string& version) {
    PullRequestLoop loop(world(), "github", hooks, number);
    const std::string head =
        loop.PushHead("pr", ProfileYaml(cluster, AtTalos(version, {"settle: 0s"})));
    EXPECT_EQ(loop.Webhook("opened", head), 202);
    EXPECT_TRUE(forge.WaitFor(60s, [&] {
      return HasState(forge.Statuses(head), "talos-reconciler/plan", "success");
    })) << world().Diagnostics();
    const std::string commit = loop.Merge();
    forge.SetMergedPull(commit, number);
    EXPECT_EQ(loop.Webhook("closed", head, /*merged=*/true, commit), 202);  // polls at once
    return commit;
  };
  auto finished = [&](int number, const std::string& commit, const std::string& version) {
    E2E_ASSERT_OK(world().WaitForReady("pr", version, commit, 120s).status());
    ASSERT_TRUE(forge.WaitFor(
        60s,
        [&] {
          const auto comments = forge.Comments(number);
          return HasState(forge.Statuses(commit), "talos-reconciler/rollout", "success") &&
                 comments.size() == 1 &&
                 comments[0].body.find("Rollout of " + commit.substr(0, 12) + ": succeeded") !=
                     std::string::npos;
        }))
        << testing::PrintToString(forge.Requests()) << world().Diagnostics();
  };

  const std::string first = merge(7, "1.12.0");
  finished(7, first, "1.12.0");
  const std::string first_comment = forge.Comments(7)[0].body;
  const std::string second = merge(8, "1.13.9");
  finished(8, second, "1.13.9");
  EXPECT_THAT(rollout_states(first), testing::ElementsAre("pending", "success"));
  EXPECT_EQ(forge.Comments(7)[0].body, first_comment);
  EXPECT_THAT(forge.Comments(7)[0].body, testing::Not(testing::HasSubstr("1.13.9")));
  EXPECT_EQ(rollout_states(second).back(), "success");
  EXPECT_TRUE(forge.Violations().empty());
}

// The hostile pull request of the untrusted-input probes, against the daemon as built: 2,500
// tree entries naming one 1 MiB blob (a few KB as a pack) and its signed webhook. The daemon
// refuses the preview at its file budget with a failing status and a comment, and its peak
// resident memory stays under 128 MiB (before the budgets it reached 2.5 GB). Under ASan the
// daemon starts near 290 MiB (the sanitizer's shadow memory), so there the bound is on what
// the pull request adds: 128 MiB more at most.
TEST_F(E2eTest, AHugePullRequestIsRefusedAtItsBudgetWithinTheDaemonsMemory) {
  constexpr long kLimitKib = 128 * 1024;
  FakeForge forge("github", "acme/fleet", kForgeToken);
  std::string hooks;
  E2E_ASSERT_OK_AND_ASSIGN(hooks, StartWithForge(world(), "github", forge));
  PullRequestLoop loop(world(), "github", hooks);
  std::string head = loop.ImportHead(2500, std::size_t{1} << 20);
  absl::StatusOr<ProcessUsage> before = ReadProcessUsage(world().daemon().pid());
  ASSERT_TRUE(before.ok()) << before.status();
  while (!head.empty() && head.back() == '\n') head.pop_back();
  EXPECT_EQ(loop.Webhook("opened", head), 202);
  ASSERT_TRUE(forge.WaitFor(60s,
                            [&] {
                              return HasState(forge.Statuses(head), "talos-reconciler/plan",
                                              "failure") &&
                                     forge.Comments(7).size() == 1;
                            }))
      << testing::PrintToString(forge.Requests()) << world().Diagnostics();
  EXPECT_THAT(forge.Statuses(head).back().description,
              testing::HasSubstr("pull request limit of 500 files"));
  EXPECT_THAT(forge.Comments(7)[0].body, testing::HasSubstr("Not planned: "));
  absl::StatusOr<ProcessUsage> usage = ReadProcessUsage(world().daemon().pid());
  ASSERT_TRUE(usage.ok()) << usage.status();
#if defined(TR_ASAN)
  EXPECT_LT(usage->peak_rss_kib - before->peak_rss_kib, kLimitKib) << before->peak_rss_kib;
#else
  EXPECT_LT(usage->peak_rss_kib, kLimitKib);
#endif
  std::cout << "daemon peak RSS " << before->peak_rss_kib << " KiB before the pull request, "
            << usage->peak_rss_kib << " KiB after\n";
  EXPECT_TRUE(forge.Violations().empty()) << testing::PrintToString(forge.Violations());
}

// GitLab and Gitea: the same loop, shorter (the rate limit and the fix are GitHub's test):
// a merge request opened with a valid profile is planned into one comment and a success
// status; its merge rolls out and lands in that comment and on the merge commit. Another
// cluster, which the merge request does not change, waits for its window all along: it
// neither holds the merge's rollout status nor appears in its comment.
void PlanAndRolloutThrough(E2eWorld& world, const std::string& forge_name) {
  FakeForge forge(forge_name, "acme/fleet", kForgeToken);
  std::string hooks;
  E2E_ASSERT_OK_AND_ASSIGN(hooks, StartWithForge(world, forge_name, forge, /*held=*/true));
  PullRequestLoop loop(world, forge_name, hooks);
  const std::string head = loop.PushHead(
      "pr", ProfileYaml(world.sim().cluster("pr"), AtTalos("1.12.0", {"settle: 0s"})));
  EXPECT_EQ(loop.Webhook("opened", head), 202);
  ASSERT_TRUE(forge.WaitFor(60s,
                            [&] {
                              return HasState(forge.Statuses(head), "talos-reconciler/plan",
                                              "success") &&
                                     forge.Comments(7).size() == 1;
                            }))
      << testing::PrintToString(forge.Requests()) << world.Diagnostics();
  EXPECT_THAT(forge.Comments(7)[0].body, testing::HasSubstr("1.12.0"));

  const std::string merge = loop.Merge();
  EXPECT_EQ(loop.Webhook("closed", head, /*merged=*/true, merge), 202);
  E2E_ASSERT_OK(world.WaitForReady("pr", "1.12.0", merge, 120s).status());
  ASSERT_TRUE(forge.WaitFor(
      60s,
      [&] {
        const auto comments = forge.Comments(7);
        return HasState(forge.Statuses(merge), "talos-reconciler/rollout", "success") &&
               comments.size() == 1 && comments[0].body.find("succeeded") != std::string::npos;
      }))
      << testing::PrintToString(forge.Requests()) << world.Diagnostics();
  EXPECT_EQ(forge.Statuses(merge).front().state, "pending");
  EXPECT_THAT(forge.Comments(7)[0].body, testing::Not(testing::HasSubstr("| held |")));
  auto held = world.repo().Status("held");
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_EQ(held->phase, core::ClusterPhase::kWaitingForWindow);
  EXPECT_TRUE(forge.Violations().empty()) << testing::PrintToString(forge.Violations());
  EXPECT_EQ(world.daemon().log().find(kForgeToken), std::string::npos);
}

TEST_F(E2eTest, GitlabMergeRequestIsPlannedAndItsMergeReportsTheRollout) {
  PlanAndRolloutThrough(world(), "gitlab");
}

TEST_F(E2eTest, GiteaPullRequestIsPlannedAndItsMergeReportsTheRollout) {
  PlanAndRolloutThrough(world(), "gitea");
}

}  // namespace
}  // namespace tr::e2e
