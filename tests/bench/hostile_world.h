// The attackers of the hostile-world soak (issue 49), run beside the soak's rollouts with
// TR_SOAK_HOSTILE=1, each with the reach the issue grants an outsider:
//   - a network path to the ports: idle connections held open on the webhook listener and on
//     --listen from many loopback addresses, and one captured signed delivery replayed with a
//     fresh 60 KB delivery id (the id is not signed) every 20 ms;
//   - write access to the status branch: every 5th round a status/ tree of 200,000 planted
//     names is pushed just before the round's change, and removed once the rollout's first
//     record has been refused (as an operator would, alerted);
//   - pull requests: every round one hostile pull request, in turn 7 profiles of 17,000 nodes
//     (just under the preview's 8 MiB), 9,000 per-node schematics, and 100 MiB of zeros outside
//     clusters/ (a 100 KiB push); each is closed the round after.
// Header-only, for soak_bench.cc.
#pragma once

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "base/hmac.h"
#include "fmt/format.h"
#include "httplib.h"
#include "tests/bench/loopback_socket.h"
#include "tests/support/e2e/e2e_world.h"
#include "tests/support/process.h"

namespace tr::e2e {

struct HostileTargets {
  std::string webhook_host;
  int webhook_port = 0;
  std::string listen_host;
  int listen_port = 0;
  std::string secret;  // the webhook secret, to capture a signed delivery as the forge sent it
};

class HostileWorld {
 public:
  HostileWorld(E2eWorld& world, HostileTargets targets)
      : world_(world), targets_(std::move(targets)) {}
  ~HostileWorld() {
    replayer_.request_stop();
    wake_.notify_all();
    if (replayer_.joinable()) replayer_.join();
    for (int fd : idle_) ::close(fd);
  }

  // Opens `per_listener` idle connections to each listener, 4 from each of many addresses, and
  // starts the replayer.
  void Start(int per_listener) {
    for (int i = 0; i < per_listener; ++i) {
      const std::string from = fmt::format("127.99.{}.{}", i / 4 / 250, i / 4 % 250 + 1);
      for (const auto& [host, port] : {std::pair{targets_.webhook_host, targets_.webhook_port},
                                       std::pair{targets_.listen_host, targets_.listen_port}}) {
        if (const int fd = bench::ConnectFrom(from, host, port); fd >= 0) idle_.push_back(fd);
      }
    }
    replayer_ = std::jthread([this](std::stop_token stop) { Replay(stop); });
  }

  // Before the round's push: every 5th round a wide status tree is planted, so the rollout
  // the push starts meets it.
  void BeforePush(int round) {
    if (round % 5 == 1) PlantWideStatusTree();
  }

  // After the round's push: the planted tree is removed once `record_failures` (the daemon's
  // talos_reconciler_status_record_failures_total) shows the daemon met it, or after 30 s; then
  // this round's hostile pull request, made from `main` (the watched branch's commit).
  template <typename Hooks>
  void AfterPush(const std::string& main, Hooks& hooks,
                 const std::function<long()>& record_failures, long failures_before_push) {
    if (!before_wide_.empty()) {
      if (world_.WaitUntil(std::chrono::seconds(30),
                           [&] { return record_failures() > failures_before_push; })) {
        ++refused_seen_;
      }
      RemoveWideStatusTree();
    }
    if (open_pr_ != 0) hooks.PullRequest("closed", open_pr_, open_head_);
    open_pr_ = open_pr_ == 0 ? kFirstPullRequest : open_pr_ + 1;
    open_head_ = HostileHead(static_cast<int>(open_pr_ - kFirstPullRequest) % 3, main);
    hooks.PullRequest("opened", open_pr_, open_head_);
  }

  std::string Totals() const {
    std::lock_guard lock(mu_);
    std::string answers;
    for (const auto& [status, count] : replay_answers_) {
      answers += fmt::format("{}{}×{}", answers.empty() ? "" : ", ", count, status);
    }
    return fmt::format(
        "{} idle connections held; {} replays ({}); {} wide status trees planted ({} seen refused "
        "by a record); {} hostile pull requests",
        idle_.size(), replays_, answers.empty() ? "none answered" : answers, planted_,
        refused_seen_,
        open_pr_ == 0 ? 0 : open_pr_ - kFirstPullRequest + 1);
  }

 private:
  static constexpr int64_t kFirstPullRequest = 100'000;
  static constexpr char kStatusRef[] = "refs/heads/talos-reconciler/status";

  void Replay(std::stop_token stop) {
    const std::string body = R"({"ref":"refs/heads/main","after":"0000000000000000000000000000000000000000"})";
    const std::string signature = "sha256=" + HmacSha256Hex(targets_.secret, body);
    httplib::Client client(targets_.webhook_host, targets_.webhook_port);
    client.set_keep_alive(true);
    client.set_connection_timeout(2);
    client.set_read_timeout(2);
    std::mutex idle;
    while (!stop.stop_requested()) {
      const httplib::Headers headers{
          {"X-GitHub-Event", "push"},
          {"X-GitHub-Delivery", fmt::format("{:0>61440}", replays_)},
          {"X-Hub-Signature-256", signature}};
      auto reply = client.Post("/hooks/github", headers, body, "application/json");
      {
        std::lock_guard lock(mu_);
        ++replays_;
        ++replay_answers_[reply ? std::to_string(reply->status) : "no answer"];
      }
      std::unique_lock lock(idle);
      wake_.wait_for(lock, stop, std::chrono::milliseconds(20), [] { return false; });
    }
  }

  // 200,000 names of one blob under status/ on top of the branch's tip (the reconciler may
  // push meanwhile: then the planted commit is made again on the new tip). Trees are written
  // with mktree: fast-import searches a directory linearly for each name it adds.
  void PlantWideStatusTree() {
    const std::string blob = Git({"hash-object", "-w", "--stdin"}, "x\n");
    std::string names;
    for (int i = 0; i < 200'000; ++i) {
      names += fmt::format("100644 blob {}\tw{:06}.yaml\n", blob, i);
    }
    for (int attempt = 0; attempt < 5; ++attempt) {
      const std::string tip = world_.repo().StatusTip();
      if (tip.empty()) return;
      const std::string status = Git({"mktree"}, Git({"ls-tree", tip + ":status"}) + names);
      std::string root;
      const std::vector<std::string> lines = absl::StrSplit(Git({"ls-tree", tip}), '\n');
      for (const std::string& line : lines) {
        if (!line.empty() && !line.ends_with("\tstatus")) root += line + "\n";
      }
      root += "040000 tree " + status + "\tstatus\n";
      const std::string wide =
          Git({"commit-tree", "-p", tip, "-m", "wide", Git({"mktree"}, root)});
      if (MoveStatusBranch(wide, tip)) {
        before_wide_ = tip;
        ++planted_;
        return;
      }
    }
  }

  // Runs git in the bare repository with `input`; its output without the last newline.
  std::string Git(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), {"git", "--git-dir", world_.repo().bare().string()});
    gitsource::testing::RunOptions options;
    options.input = input;
    return gitsource::testing::MustRun(args, options);
  }

  // A commit on the tip whose tree is the branch's before the planting.
  void RemoveWideStatusTree() {
    if (before_wide_.empty()) return;
    for (int attempt = 0; attempt < 5; ++attempt) {
      const std::string tip = world_.repo().StatusTip();
      const std::string cleaned =
          Git({"commit-tree", "-p", tip, "-m", "remove planted names", before_wide_ + "^{tree}"});
      if (MoveStatusBranch(cleaned, tip)) {
        before_wide_.clear();
        return;
      }
    }
  }

  bool MoveStatusBranch(const std::string& to, const std::string& from) {
    return gitsource::testing::RunCommand({"git", "--git-dir", world_.repo().bare().string(),
                                           "update-ref", kStatusRef, to, from})
               .exit_code == 0;
  }

  // A pull request's head on `main`: kind 0 large profiles, 1 schematics, 2 zeros.
  std::string HostileHead(int kind, const std::string& main) {
    std::string files;
    const auto file = [&](const std::string& path, const std::string& content) {
      files += fmt::format("M 100644 inline {}\ndata {}\n{}\n", path, content.size(), content);
    };
    if (kind == 0) {
      for (int c = 0; c < 7; ++c) file(fmt::format("clusters/h{}.yaml", c), WideProfile(c, false));
    } else if (kind == 1) {
      file("clusters/h0.yaml", WideProfile(0, true));
    } else {
      file("junk/zeros.bin", std::string(std::size_t{100} << 20, '\0'));
    }
    world_.repo().FastImport(fmt::format(
        "commit refs/hostile/pull\ncommitter Mallory <m@example.com> 1700000000 +0000\n"
        "data 7\nhostile\nfrom {}\n{}\n",
        main, files));
    const std::string head = Git({"rev-parse", "refs/hostile/pull"});
    Git({"update-ref", fmt::format("refs/pull/{}/head", open_pr_), head});
    return head;
  }

  // A profile of 17,000 workers (about 1 MB), each with a schematic of its own when asked.
  static std::string WideProfile(int c, bool schematics) {
    std::string text = fmt::format(
        "apiVersion: talos-reconciler.dev/v1alpha1\nkind: ClusterProfile\n"
        "metadata: {{name: h{0}}}\nspec:\n  endpoints: [10.{0}.0.1]\n  credentials: h{0}\n"
        "  talos: {{version: 1.12.0, {1}}}\n  kubernetes: {{version: 1.35.0}}\n  nodes:\n"
        "    - {{name: cp-1, address: 10.{0}.0.1, role: controlplane}}\n",
        c, schematics ? "schematic: {}" : "image: ghcr.io/siderolabs/installer");
    const int nodes = schematics ? 9'000 : 17'000;
    for (int i = 0; i < nodes; ++i) {
      text += fmt::format("    - {{name: w-{}, address: 10.{}.{}.{}, role: worker", i, c + 100,
                          i >> 8 & 255, i & 255);
      text += schematics ? fmt::format(", schematic: {{customization: {{meta: [{{key: 10, "
                                       "value: \"n{}\"}}]}}}}}}\n",
                                       i)
                         : "}\n";
    }
    return text;
  }

  E2eWorld& world_;
  const HostileTargets targets_;
  std::vector<int> idle_;
  std::jthread replayer_;
  std::condition_variable_any wake_;
  mutable std::mutex mu_;
  int replays_ = 0;
  std::map<std::string, int> replay_answers_;
  int planted_ = 0;
  int refused_seen_ = 0;
  std::string before_wide_;
  int64_t open_pr_ = 0;
  std::string open_head_;
};

}  // namespace tr::e2e
