// Benchmark: a long unattended run, to see that the daemon's memory, descriptors, threads and
// state directory level off (issue 27). The real talos-reconciler daemon watches 20 clusters of
// 1 to 3 nodes on talos-sim at time scale 0.02, reports to a fake GitHub (--forge github) and
// notifies a JSON receiver. Each round:
//   - a push moves a quarter of the clusters to the other Talos version (1.11.6 <-> 1.12.0,
//     allowDowngrade) and a signed push webhook announces it; the round waits for them;
//   - TR_SOAK_PRS new pull requests (numbers never reused) whose head is the previous round's
//     commit: opened, synchronize for half of them, closed; one is closed merged with this
//     round's commit as its merge commit, so its comment gets the rollout's report;
//   - every 10th round the forge answers 503 to its next 40 requests; every 15th the Git
//     repository disappears from the server for 3 s (renamed away) and comes back;
//   - in the first half, every 10th round the daemon is restarted (SIGTERM, or SIGKILL every
//     other time); the second half is one process, so growth there is growth of one daemon.
// After every round one line: the daemon's RSS, open descriptors, threads, the size of its
// state directory. At the end, ROW lines (see scripts/bench) compare the second half's end with
// its start after a warm-up.
//
// Usage: soak_bench; TR_SOAK_ROUNDS (default 60, about 9 minutes on 2 busy cores) and
// TR_SOAK_PRS (pull requests a round, default 20) set its length. TR_SOAK_HOSTILE=1 runs the
// attackers of tests/bench/hostile_world.h beside it (issue 49): rows then give the daemon's
// peak RSS against the chart's 256 MiB limit, how fast the forge's signed deliveries and
// /healthz were answered, and whether every rollout still completed.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/hmac.h"
#include "fmt/format.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/bench/bench_support.h"
#include "tests/bench/hostile_world.h"
#include "tests/support/e2e/e2e_world.h"
#include "tests/support/e2e/process_usage.h"
#include "tests/support/fake_forge.h"
#include "tests/support/process.h"

namespace tr::e2e {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kSecret[] = "soak-webhook-secret";
constexpr char kToken[] = "ghp_soakForgeToken";
// A Standard Webhooks secret, as the json notifications want: whsec_ and a base64 key.
constexpr char kNotifySecret[] = "whsec_c29hay1ub3RpZnktc2VjcmV0LW9mLTMyLWJ5dGVzISE=";
constexpr char kVersions[2][8] = {"1.11.6", "1.12.0"};
constexpr int kClusters = 20;

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && std::atoi(value) > 0 ? std::atoi(value) : fallback;
}

struct Sample {
  int round = 0;
  double seconds = 0;
  long rss_kib = 0;
  long rss_anon_kib = 0;  // the heap's part; the rest is mapped files (packs, code)
  long peak_rss_kib = 0;  // the process's peak so far (VmHWM)
  double healthz_ms = 0;  // how long /healthz took to answer
  int fds = 0;
  int threads = 0;
  uintmax_t state_bytes = 0;
};

int OpenDescriptors(pid_t pid) {
  std::error_code ec;
  int fds = 0;
  for (auto it = fs::directory_iterator(fmt::format("/proc/{}/fd", pid), ec);
       !ec && it != fs::end(it); it.increment(ec)) {
    ++fds;
  }
  return fds;
}

// Sends signed GitHub deliveries to the daemon's webhook listener.
class Hooks {
 public:
  Hooks(std::string host, int port) : host_(std::move(host)), port_(port) {}

  void Send(const std::string& event, const nlohmann::json& payload) {
    const std::string body = payload.dump();
    const httplib::Headers headers{
        {"X-GitHub-Event", event},
        {"X-GitHub-Delivery", fmt::format("soak-{}-{}", getpid(), ++sent_)},
        {"X-Hub-Signature-256", "sha256=" + HmacSha256Hex(kSecret, body)}};
    httplib::Client client(host_, port_);
    const auto sent_at = Clock::now();
    auto reply = client.Post("/hooks/github", headers, body, "application/json");
    const double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - sent_at).count();
    slowest_ms_ = std::max(slowest_ms_, ms);
    if (ms > 1000) ++over_a_second_;
    if (!reply || reply->status != 202) ++refused_;
  }
  void Push(const std::string& commit) {
    Send("push", {{"ref", "refs/heads/main"}, {"after", commit}});
  }
  void PullRequest(const std::string& action, int64_t number, const std::string& head,
                   const std::string& merge_commit = "") {
    nlohmann::json pr{{"head", {{"sha", head}}},
                      {"base", {{"ref", "main"}}},
                      {"merged", !merge_commit.empty()}};
    pr["merge_commit_sha"] =
        merge_commit.empty() ? nlohmann::json() : nlohmann::json(merge_commit);
    Send("pull_request", {{"action", action}, {"number", number}, {"pull_request", pr}});
  }
  int sent() const { return sent_; }
  int refused() const { return refused_; }
  double slowest_ms() const { return slowest_ms_; }
  int over_a_second() const { return over_a_second_; }

 private:
  std::string host_;
  int port_;
  int sent_ = 0;
  int refused_ = 0;
  double slowest_ms_ = 0;
  int over_a_second_ = 0;
};

// A notification receiver that takes every POST (the daemon's --notify format=json).
class Receiver {
 public:
  explicit Receiver(const std::string& host) {
    server_.Post(".*", [this](const httplib::Request&, httplib::Response& res) {
      ++received_;
      res.status = 200;
    });
    port_ = server_.bind_to_any_port(host);
    thread_ = std::jthread([this] { server_.listen_after_bind(); });
  }
  ~Receiver() { server_.stop(); }
  int port() const { return port_; }
  int received() const { return received_; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::atomic<int> received_ = 0;
  std::jthread thread_;
};

std::vector<ClusterDef> SoakFleet() {
  std::vector<ClusterDef> fleet;
  for (int c = 0; c < kClusters; ++c) {
    // 1 control plane; 1 cp + 1 worker; 3 control planes.
    const int cps = c % 3 == 2 ? 3 : 1;
    fleet.push_back(MakeCluster(fmt::format("s-{:02}", c), cps, c % 3 == 1 ? 1 : 0, kVersions[0]));
  }
  return fleet;
}

const std::vector<std::string> kPolicy = {"settle: 0s", "allowDowngrade: true",
                                          "etcdSnapshot: false"};

// The world of the soak: fleet, forge, receiver, daemon.
class Soak {
 public:
  explicit Soak(const fs::path& dir)
      : world_(dir), forge_("github", "acme/fleet", kToken), version_(kClusters, 0) {}

  absl::Status Start(bool hostile) {
    if (auto st = world_.StartFleet(SoakFleet(), {.time_scale = 0.02}); !st.ok()) return st;
    world_.PushProfiles(Profiles(), "initial profiles");
    const std::string prefix = world_.sim().address_prefix();
    absl::StatusOr<int> port = FreePort(prefix + ".252");
    if (!port.ok()) return port.status();
    hooks_.emplace(prefix + ".252", *port);
    receiver_.emplace(prefix + ".253");
    std::ofstream(world_.dir() / "webhook-secret") << kSecret << "\n";
    std::ofstream(world_.dir() / "forge-token") << kToken << "\n";
    std::ofstream(world_.dir() / "notify-secret") << kNotifySecret << "\n";
    absl::Status started = world_.StartDaemon([&](DaemonOptions& d) {
      d.poll_interval = "5s";  // the webhooks announce pushes; a poll catches the lost ones
      d.resync = "10s";
      d.node_poll_interval = "100ms";
      d.extra_args = {
          "--webhook-listen", fmt::format("{}.252:{}", prefix, *port), "--webhook-secret-file",
          (world_.dir() / "webhook-secret").string(), "--forge", "github", "--forge-api-url",
          forge_.api_url(), "--forge-allow-insecure-http", "--forge-token-file",
          (world_.dir() / "forge-token").string(), "--forge-repository", "acme/fleet",
          "--forge-comment-interval", "200ms", "--notify",
          fmt::format("url=http://{}.253:{}/hook,format=json,secret-file={}", prefix,
                      receiver_->port(), (world_.dir() / "notify-secret").string())};
    });
    if (!started.ok()) return started;
    if (!WaitRolledOut("")) {
      return absl::DeadlineExceededError(
          fmt::format("the fleet never became Ready (daemon exit status {})",
                      world_.daemon().exit_status().value_or(-1)));
    }
    if (hostile) StartHostile(prefix, *port);
    return absl::OkStatus();
  }

  // One round (see the file comment); false when the rollout did not finish in time.
  bool Round(int round, int prs) {
    for (int c = round % 4; c < kClusters; c += 4) version_[c] ^= 1;
    const long failures = hostile_ ? Counter(kRecordFailures) : 0;
    if (hostile_) hostile_->BeforePush(round);
    const std::string commit =
        world_.PushProfiles(Profiles(), fmt::format("round {}", round));
    hooks_->Push(commit);
    if (hostile_) {
      hostile_->AfterPush(commit, *hooks_, [this] { return Counter(kRecordFailures); }, failures);
    }
    PullRequests(round, prs, commit);
    const bool done = WaitRolledOut(commit);
    previous_ = commit;
    if (round % 10 == 9) forge_.Inject({.status = 503, .headers = {}, .body = "{}"}, 40);
    if (round % 15 == 14) GitOutage();
    return done;
  }

  // SIGKILL every 20th round, SIGTERM otherwise, then start again on the same state.
  void Restart(int round) {
    if (round % 20 == 9) {
      world_.daemon().Kill();
    } else {
      (void)world_.daemon().Terminate();
    }
    if (auto st = world_.daemon().Start(); !st.ok()) {
      std::fprintf(stderr, "restart: %s\n", std::string(st.message()).c_str());
    }
  }

  Sample Measure(int round, Clock::time_point start) {
    Sample s{.round = round,
             .seconds = std::chrono::duration<double>(Clock::now() - start).count()};
    const pid_t pid = world_.daemon().pid();
    if (auto usage = ReadProcessUsage(pid); usage.ok()) {
      s.rss_kib = usage->rss_kib;
      s.rss_anon_kib = usage->rss_anon_kib;
      s.threads = usage->threads;
    }
    s.fds = OpenDescriptors(pid);
    if (auto usage = ReadProcessUsage(pid); usage.ok()) s.peak_rss_kib = usage->peak_rss_kib;
    const auto asked = Clock::now();
    (void)world_.daemon().Get("/healthz");
    s.healthz_ms = std::chrono::duration<double, std::milli>(Clock::now() - asked).count();
    s.state_bytes = DirectoryBytes(world_.daemon().options().state_dir);
    return s;
  }

  std::string Totals() {
    return fmt::format("{} webhooks sent ({} not accepted), {} pull requests, {} notifications "
                       "received, {} forge requests, daemon started {} times{}",
                       hooks_->sent(), hooks_->refused(), next_pr_ - 1, receiver_->received(),
                       forge_.Requests().size(), world_.daemon().starts(),
                       hostile_ ? "; attackers: " + hostile_->Totals() : "");
  }
  E2eWorld& world() { return world_; }
  const Hooks& hooks() const { return *hooks_; }

 private:
  std::map<std::string, ProfileDef> Profiles() const {
    std::map<std::string, ProfileDef> profiles;
    for (int c = 0; c < kClusters; ++c) {
      profiles[fmt::format("s-{:02}", c)] = AtTalos(kVersions[version_[c]], kPolicy);
    }
    return profiles;
  }

  // New pull requests whose head is the previous round's commit (it differs from main in the
  // clusters this round moved, so each gets a plan comment).
  void PullRequests(int round, int prs, const std::string& commit) {
    if (previous_.empty()) return;
    const int64_t first = next_pr_;
    for (int i = 0; i < prs; ++i) {
      const int64_t number = next_pr_++;
      gitsource::testing::MustRun({"git", "--git-dir", world_.repo().bare().string(),
                                   "update-ref", fmt::format("refs/pull/{}/head", number),
                                   previous_});
      hooks_->PullRequest("opened", number, previous_);
      if (i % 2 == 0) hooks_->PullRequest("synchronize", number, previous_);
    }
    for (int64_t number = first; number < next_pr_; ++number) {
      const bool merged = number == first && round % 2 == 0;
      hooks_->PullRequest("closed", number, previous_, merged ? commit : "");
    }
  }

  bool WaitRolledOut(const std::string& commit) {
    std::vector<std::string> names;
    for (int c = 0; c < kClusters; ++c) names.push_back(fmt::format("s-{:02}", c));
    std::string checked;
    bool dead = false;  // the daemon exited: no use waiting
    const bool done = world_.WaitUntil(std::chrono::minutes(3), [&] {
      if ((dead = !world_.daemon().running())) return true;
      const std::string tip = world_.repo().StatusTip();
      if (tip.empty() || tip == checked) return false;
      checked = tip;
      auto all = world_.repo().StatusAll(names);
      if (!all.ok() || all->size() != names.size()) return false;
      for (int c = 0; c < kClusters; ++c) {
        const core::ClusterStatus& s = all->at(names[c]);
        if (s.phase != core::ClusterPhase::kReady || s.talos.current != kVersions[version_[c]] ||
            (!commit.empty() && s.desired_commit_applied != commit)) {
          return false;
        }
      }
      return true;
    });
    return done && !dead;
  }

  // The repository disappears from the Git server until the daemon has seen a poll fail (at
  // most 30 s): polls, fetches and status pushes fail until it is back.
  void GitOutage() {
    const fs::path bare = world_.repo().bare();
    const fs::path away = bare.string() + ".away";
    const long before = FailedPolls();
    fs::rename(bare, away);
    (void)world_.WaitUntil(std::chrono::seconds(30), [&] { return FailedPolls() > before; });
    fs::rename(away, bare);
  }

  static constexpr std::string_view kFailedPolls =
      "talos_reconciler_git_polls_total{result=\"failed\"} ";
  static constexpr std::string_view kRecordFailures =
      "talos_reconciler_status_record_failures_total ";

  long FailedPolls() { return Counter(kFailedPolls); }

  // The value of the daemon's `series` (its name and labels, and a space) now; -1 when it does
  // not answer.
  long Counter(std::string_view series) {
    auto metrics = world_.daemon().Get("/metrics");
    if (!metrics.ok()) return -1;
    // At the start of a line: the series' name alone also starts its # HELP line's text.
    const size_t at = metrics->body.find("\n" + std::string(series));
    return at == std::string::npos ? 0
                                   : std::atol(metrics->body.c_str() + at + 1 + series.size());
  }

  // The attackers, from addresses of their own next to the daemon's.
  void StartHostile(const std::string& prefix, int webhook_port) {
    const std::string listen = world_.daemon().options().listen;
    const size_t colon = listen.rfind(':');
    hostile_.emplace(world_, HostileTargets{prefix + ".252", webhook_port,
                                            listen.substr(0, colon),
                                            std::atoi(listen.c_str() + colon + 1), kSecret});
    hostile_->Start(600);
  }

  E2eWorld world_;
  forge_test::FakeForge forge_;
  std::optional<Hooks> hooks_;
  std::optional<Receiver> receiver_;
  std::optional<HostileWorld> hostile_;
  std::vector<int> version_;  // index into kVersions, per cluster
  std::string previous_;      // the previous round's commit
  int64_t next_pr_ = 1;
};

void Print(const Sample& s) {
  std::printf(
      "round %4d  %7.1f s  RSS %7.1f MiB (anonymous %7.1f)  fds %4d  threads %3d  "
      "state dir %8.2f MiB\n",
      s.round, s.seconds, static_cast<double>(s.rss_kib) / 1024,
      static_cast<double>(s.rss_anon_kib) / 1024, s.fds, s.threads,
      static_cast<double>(s.state_bytes) / (1 << 20));
  std::fflush(stdout);
}

// The largest value of `field` over samples [from, to).
template <typename Field>
double Peak(const std::vector<Sample>& samples, size_t from, size_t to, Field field) {
  double peak = 0;
  for (size_t i = from; i < to && i < samples.size(); ++i) {
    peak = std::max(peak, static_cast<double>(samples[i].*field));
  }
  return peak;
}

// The second half is one process: its last rounds against its first after a warm-up, each a
// peak over a tenth of the run (descriptors and RSS move with the connections in flight).
void PrintRows(const std::vector<Sample>& samples, int rounds, int prs) {
  const size_t n = samples.size();
  const size_t window = std::max<size_t>(1, n / 10);
  const size_t from = std::min(n - 1, n / 2 + window);
  const size_t last = n > window ? n - window : 0;
  const std::string span =
      fmt::format("peaks of rounds {}-{} against {}-{} of {}, {} pull requests a round",
                  samples[last].round, samples.back().round, samples[from].round,
                  samples[std::min(n - 1, from + window - 1)].round, rounds, prs);
  const double rss0 = Peak(samples, from, from + window, &Sample::rss_kib) / 1024;
  const double rss1 = Peak(samples, last, n, &Sample::rss_kib) / 1024;
  const double growth = rss1 / std::max(1.0, rss0);
  PrintBenchRow("soak: daemon RSS, last rounds ÷ after warm-up (one process)", "≤ 1.10",
                fmt::format("{:.2f}", growth), growth <= 1.10,
                fmt::format("{:.1f} → {:.1f} MiB; {}", rss0, rss1, span));
  for (auto [name, field] : {std::pair{"open descriptors", &Sample::fds},
                             std::pair{"threads", &Sample::threads}}) {
    const double before = Peak(samples, from, from + window, field);
    const double after = Peak(samples, last, n, field);
    PrintBenchRow(fmt::format("soak: daemon {}, last rounds / after warm-up", name),
                  "no growth", fmt::format("{:.0f} / {:.0f}", after, before), after <= before,
                  span);
  }
  const double state0 = Peak(samples, from, from + window, &Sample::state_bytes) / 1048576;
  const double state1 = Peak(samples, last, n, &Sample::state_bytes) / 1048576;
  PrintBenchRow("soak: state directory, last rounds / after warm-up", "",
                fmt::format("{:.2f} / {:.2f} MiB", state1, state0), std::nullopt,
                span + "; the mirror is repacked past 24 packs");
}

// What the attackers could not do: the daemon's peak memory against the chart's limit, the
// forge's deliveries and the probe answered in time, every rollout completed.
void PrintHostileRows(const std::vector<Sample>& samples, const Hooks& hooks, int late) {
  const double peak = Peak(samples, 0, samples.size(), &Sample::peak_rss_kib) / 1024;
  PrintBenchRow("hostile soak: daemon peak RSS (VmHWM, any process of the run)", "≤ 256 MiB",
                fmt::format("{:.1f} MiB", peak), peak <= 256, "the chart's memory limit");
  PrintBenchRow("hostile soak: signed deliveries answered within 1 s", "all",
                fmt::format("{} of {} over 1 s, slowest {:.0f} ms, {} not accepted",
                            hooks.over_a_second(), hooks.sent(), hooks.slowest_ms(),
                            hooks.refused()),
                hooks.over_a_second() == 0, "not accepted: sent while the daemon restarted");
  const double probe = Peak(samples, 0, samples.size(), &Sample::healthz_ms);
  PrintBenchRow("hostile soak: /healthz, slowest answer after a round", "≤ 100 ms",
                fmt::format("{:.1f} ms", probe), probe <= 100, "");
  PrintBenchRow("hostile soak: rounds whose rollout took over 3 minutes", "0",
                std::to_string(late), late == 0, "");
}

int Run() {
  const int rounds = EnvInt("TR_SOAK_ROUNDS", 60);
  const int prs = EnvInt("TR_SOAK_PRS", 20);
  RaiseFileLimit();
  const fs::path dir = BenchDirectory("soak");
  if (dir.empty()) return 1;
  Soak soak(dir);
  const bool hostile = EnvInt("TR_SOAK_HOSTILE", 0) > 0;
  if (auto st = soak.Start(hostile); !st.ok()) {
    std::fprintf(stderr, "start: %s\n%s\n", std::string(st.message()).c_str(),
                 soak.world().Diagnostics().c_str());
    return 1;
  }
  std::printf("%d clusters (1-3 nodes), time scale 0.02, %d rounds, %d pull requests a round\n",
              kClusters, rounds, prs);
  const auto start = Clock::now();
  std::vector<Sample> samples;
  int late = 0;
  for (int round = 0; round < rounds; ++round) {
    late += !soak.Round(round, prs);
    samples.push_back(soak.Measure(round, start));  // the process that did the round
    Print(samples.back());
    if ((round < rounds / 2 && round % 10 == 9) || round == rounds / 2 - 1) soak.Restart(round);
  }
  std::printf("%s; %d rounds whose rollout took over 3 minutes\n", soak.Totals().c_str(), late);
  PrintRows(samples, rounds, prs);
  if (hostile) PrintHostileRows(samples, soak.hooks(), late);
  if (late == 0) fs::remove_all(dir);
  return late == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tr::e2e

int main() { return tr::e2e::Run(); }
