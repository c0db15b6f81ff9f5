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
#include "tests/e2e/signed_webhook.h"
#include "tests/support/e2e/process_usage.h"
#include "tests/support/fake_forge.h"
#include "tests/support/process.h"

namespace tr::e2e {
namespace {

using forge_test::FakeForge;
using forge_test::FakeStatus;

constexpr char kForgeToken[] = "ghp_e2eForgeTokenNeverInTheLog";
constexpr char kWebhookSecret[] = "e2e-pr-webhook-secret";

// A pull (merge) request, number 7 unless told, on `forge`: its head ref and the forge's
// webhooks for it.
class PullRequestLoop {
 public:
  PullRequestLoop(E2eWorld& world, std::string forge, std::string hooks_url, int number = 7)
      : world_(world),
        forge_(std::move(forge)),
        hooks_url_(std::move(hooks_url)),
        number_(number),
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
    Git({"checkout", "-q", "-B", fmt::format("pr-{}", number_)});
    std::ofstream(work_ / ("clusters/" + cluster + ".yaml")) << profile;
    Git({"commit", "-q", "-am", fmt::format("pr {}: {}", number_, cluster)});
    const std::string ref = forge_ == "gitlab"
                                ? fmt::format("HEAD:refs/merge-requests/{}/head", number_)
                                : fmt::format("HEAD:refs/pull/{}/head", number_);
    Git({"push", "-q", "-f", "origin", ref});
    return Git({"rev-parse", "HEAD"});
  }

  // Makes the pull request's head ref, on top of main, a commit of `entries` tree entries that
  // all name one blob of `blob_bytes` (fast-import: the pack stays a few KB); its id.
  std::string ImportHead(int entries, std::size_t blob_bytes) {
    std::string stream =
        fmt::format("blob\nmark :1\ndata {}\n{}\n", blob_bytes, std::string(blob_bytes, 'a'));
    stream +=
        "commit refs/pull/7/head\ncommitter Mallory <m@example.com> 1700000000 +0000\n"
        "data 5\nhuge\nfrom refs/heads/main\n";
    for (int i = 0; i < entries; ++i) {
      stream += fmt::format("M 100644 :1 clusters/c{:05}.yaml\n", i);
    }
    world_.repo().FastImport(stream + "\n");
    return gitsource::testing::MustRun(
        {"git", "--git-dir", world_.repo().bare().string(), "rev-parse", "refs/pull/7/head"});
  }

  // Merges the pull request into main and pushes it; the merge commit.
  std::string Merge() {
    Git({"checkout", "-q", "main"});
    Git({"merge", "-q", "--no-ff", fmt::format("pr-{}", number_), "-m",
         fmt::format("Merge pull request #{}", number_)});
    Git({"push", "-q", "origin", "main"});
    return Git({"rev-parse", "HEAD"});
  }

  // `action` in GitHub's words: opened, synchronize, closed (+ merged).
  int Webhook(const std::string& action, const std::string& head, bool merged = false,
              const std::string& merge_commit = "") {
    const auto payload = world_.dir() / ("pr-" + action + ".json");
    const nlohmann::json merge_sha =
        merge_commit.empty() ? nlohmann::json() : nlohmann::json(merge_commit);
    if (forge_ == "gitlab") {
      const std::string gitlab_action = merged ? "merge" : action == "opened" ? "open" : "update";
      std::ofstream(payload) << nlohmann::json{
          {"object_kind", "merge_request"},
          {"object_attributes",
           {{"iid", number_},
            {"action", gitlab_action},
            {"last_commit", {{"id", head}}},
            {"target_branch", "main"},
            {"merge_commit_sha",
             merge_sha}}}}.dump();
      return Single(SendWebhook(hooks_url_, kWebhookSecret, forge_, "Merge Request Hook", payload));
    }
    nlohmann::json pr{{"head", {{"sha", head}}}, {"base", {{"ref", "main"}}}, {"merged", merged}};
    pr["merge_commit_sha"] = merge_sha;
    std::ofstream(payload) << nlohmann::json{
        {"action", action},
        {"number", number_},
        {"pull_request", pr}}.dump();
    return Single(SendWebhook(hooks_url_, kWebhookSecret, forge_, "pull_request", payload));
  }

 private:
  static int Single(const std::vector<int>& statuses) {
    return statuses.size() == 1 ? statuses[0] : 0;
  }

  E2eWorld& world_;
  std::string forge_;
  std::string hooks_url_;
  int number_;
  std::filesystem::path work_;
};

bool HasState(const std::vector<FakeStatus>& statuses, const std::string& context,
              const std::string& state) {
  return std::any_of(statuses.begin(), statuses.end(),
                     [&](const FakeStatus& s) { return s.context == context && s.state == state; });
}

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
  if (auto st = world.StartFleet(clusters); !st.ok()) return st;
  world.PushProfiles(profiles, "initial profile");
  const std::string host = world.sim().address_prefix() + ".252";
  absl::StatusOr<int> port = FreePort(host);
  if (!port.ok()) return port.status();
  std::ofstream(world.dir() / "webhook-secret") << kWebhookSecret << "\n";
  std::ofstream(world.dir() / "forge-token") << kForgeToken << "\n";
  if (auto st = world.StartDaemon([&](DaemonOptions& o) {
        o.poll_interval = "1h";
        o.extra_args = {"--webhook-listen",
                        fmt::format("{}:{}", host, *port),
                        "--webhook-secret-file",
                        (world.dir() / "webhook-secret").string(),
                        "--forge",
                        forge,
                        "--forge-api-url",
                        fake.api_url(),
                        "--forge-allow-insecure-http",  // the fake forge: http on loopback
                        "--forge-token-file",
                        (world.dir() / "forge-token").string(),
                        "--forge-repository",
                        "acme/fleet",
                        "--forge-comment-interval",
                        "200ms"};
      });
      !st.ok()) {
    return st;
  }
  if (auto ready = world.WaitForReady("pr", "1.11.6", "", 60s); !ready.ok()) {
    return ready.status();
  }
  return fmt::format("http://{}:{}", host, *port);
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
