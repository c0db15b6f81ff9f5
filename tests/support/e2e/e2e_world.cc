#include "tests/support/e2e/e2e_world.h"

#include <fstream>

#include "core/rollout.h"
#include "fmt/format.h"

namespace tr::e2e {
namespace fs = std::filesystem;

namespace {

std::string Tail(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  const auto cut = text.find('\n', text.size() - max_bytes);
  return "...\n" + text.substr(cut == std::string::npos ? text.size() - max_bytes : cut + 1);
}

// The simulator's state changes (boots, stages, faults, pulls, installs) from its journal, the
// last `max_bytes` of them: what the nodes did, beside what the daemon says it saw.
std::string StateChanges(const std::filesystem::path& journal, size_t max_bytes) {
  std::ifstream in(journal, std::ios::binary);
  std::string kept;
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"kind\":\"state\"") != std::string::npos) kept += line + "\n";
  }
  return Tail(kept, max_bytes);
}

}  // namespace

std::string PhaseName(const core::ClusterStatus& status) {
  return core::ClusterPhaseName(status.phase);
}

std::string Summary(const core::ClusterStatus& status) {
  return fmt::format("{} talos {}->{} {} {}: {}", PhaseName(status), status.talos.current,
                     status.talos.target, core::ComponentStateName(status.talos.state),
                     status.talos.progress, status.message);
}

E2eWorld::E2eWorld(fs::path dir) : dir_(std::move(dir)) {
  fs::create_directories(dir_);
  watcher_.Watch(dir_);
}

E2eWorld::~E2eWorld() {
  daemon_.reset();
  sim_.reset();
}

absl::Status E2eWorld::StartFleet(const std::vector<ClusterDef>& clusters,
                                  const FleetOptions& options) {
  auto sim = SimProcess::Start(dir_ / "fleet", FleetYaml(clusters, options));
  if (!sim.ok()) return sim.status();
  sim_ = *std::move(sim);
  watcher_.Watch(sim_->state_dir());
  repo_ = std::make_unique<ProfileRepo>(dir_ / "git");
  watcher_.Watch(repo_->refs_dir());
  return absl::OkStatus();
}

std::string E2eWorld::PushProfiles(const std::map<std::string, ProfileDef>& profiles,
                                   const std::string& message,
                                   std::map<std::string, std::string> files) {
  if (!defaults_pushed_ && !files.contains("reconciler.yaml")) {
    files["reconciler.yaml"] = RepositoryDefaultsYaml();
  }
  defaults_pushed_ = true;
  for (const auto& [cluster, profile] : profiles) {
    files[ProfilePath(cluster)] = ProfileYaml(sim_->cluster(cluster), profile);
  }
  return repo_->Push(files, message);
}

absl::Status E2eWorld::StartDaemon(const std::function<void(DaemonOptions&)>& configure) {
  if (!daemon_) {
    const std::string host = sim_->address_prefix() + ".250";
    auto port = FreePort(host);
    if (!port.ok()) return port.status();
    DaemonOptions options;
    options.repo_url = repo_->url();
    options.credentials_dir = sim_->state_dir();
    options.state_dir = dir_ / "daemon-state";
    options.listen = fmt::format("{}:{}", host, *port);
    if (configure) configure(options);
    daemon_ = std::make_unique<DaemonProcess>(std::move(options), dir_ / "daemon.log");
  }
  return daemon_->Start();
}

bool E2eWorld::WaitUntil(std::chrono::milliseconds timeout,
                         const std::function<bool()>& condition) {
  return e2e::WaitUntil(watcher_, timeout, condition);
}

absl::StatusOr<core::ClusterStatus> E2eWorld::WaitForStatus(
    const std::string& cluster, const std::function<bool(const core::ClusterStatus&)>& predicate,
    std::chrono::milliseconds timeout, bool allow_daemon_down) {
  absl::StatusOr<core::ClusterStatus> last = absl::NotFoundError("no status read yet");
  bool daemon_down = false;
  const bool held = WaitUntil(timeout, [&] {
    last = repo_->Status(cluster);
    if (last.ok() && predicate(*last)) return true;
    daemon_down = !allow_daemon_down && daemon_ && !daemon_->running();
    return daemon_down;
  });
  const std::string seen = last.ok() ? Summary(*last) : std::string(last.status().message());
  if (daemon_down) {
    return absl::AbortedError(
        fmt::format("the daemon exited ({}) while waiting for {}; last status: {}",
                    gitsource::DescribeWaitStatus(*daemon_->exit_status()), cluster, seen));
  }
  if (!held) {
    return absl::DeadlineExceededError(
        fmt::format("status of {} not as expected within {} ms; last: {}\n{}", cluster,
                    timeout.count(), seen, repo_->StatusText(cluster)));
  }
  return last;
}

absl::StatusOr<core::ClusterStatus> E2eWorld::WaitForReady(const std::string& cluster,
                                                           const std::string& talos,
                                                           const std::string& applied,
                                                           std::chrono::milliseconds timeout) {
  return WaitForStatus(
      cluster,
      [&](const core::ClusterStatus& s) {
        return s.phase == core::ClusterPhase::kReady && s.talos.current == talos &&
               s.talos.target == talos && (applied.empty() || s.desired_commit_applied == applied);
      },
      timeout);
}

absl::StatusOr<core::ClusterStatus> E2eWorld::WaitForKubernetesReady(
    const std::string& cluster, const std::string& kubernetes, const std::string& applied,
    std::chrono::milliseconds timeout) {
  return WaitForStatus(
      cluster,
      [&](const core::ClusterStatus& s) {
        return s.phase == core::ClusterPhase::kReady && s.kubernetes.current == kubernetes &&
               s.desired_commit_applied == applied;
      },
      timeout);
}

std::string E2eWorld::Diagnostics(size_t max_bytes) const {
  std::string text;
  if (daemon_)
    text += "--- daemon log (" + daemon_->log_file().string() + "):\n" +
            Tail(daemon_->log(), max_bytes);
  if (sim_) {
    text += "--- talos-sim log:\n" + Tail(sim_->log(), max_bytes / 4);
    text += "--- talos-sim journal, state changes:\n" +
            StateChanges(sim_->state_dir() / "journal.jsonl", max_bytes / 2);
  }
  return text;
}

}  // namespace tr::e2e
