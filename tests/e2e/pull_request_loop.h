// A pull (merge) request on the fake forge, end to end: its head ref pushed to the fleet
// repository, its signed webhooks, its merge; and the daemon started watching `main` with
// --forge against the fake. Shared by the pull-request tests.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/signed_webhook.h"
#include "tests/support/fake_forge.h"
#include "tests/support/process.h"

namespace tr::e2e {

using forge_test::FakeForge;
using forge_test::FakeStatus;

inline constexpr char kForgeToken[] = "ghp_e2eForgeTokenNeverInTheLog";
inline constexpr char kWebhookSecret[] = "e2e-pr-webhook-secret";

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

inline bool HasState(const std::vector<FakeStatus>& statuses, const std::string& context,
              const std::string& state) {
  return std::any_of(statuses.begin(), statuses.end(),
                     [&](const FakeStatus& s) { return s.context == context && s.state == state; });
}

// The daemon watching `main` with --forge `forge` against the fake, the fleet `clusters`
// started and `profiles` pushed first; ready once `ready.first` runs Talos `ready.second`. The
// hooks' base URL.
inline absl::StatusOr<std::string> StartFleetWithForge(
    E2eWorld& world, const std::string& forge, const FakeForge& fake,
    const std::vector<ClusterDef>& clusters, const std::map<std::string, ProfileDef>& profiles,
    const std::pair<std::string, std::string>& ready) {
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
  if (auto up = world.WaitForReady(ready.first, ready.second, "", 60s); !up.ok()) {
    return up.status();
  }
  return fmt::format("http://{}:{}", host, *port);
}

}  // namespace tr::e2e
