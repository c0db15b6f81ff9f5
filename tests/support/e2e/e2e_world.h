// One end-to-end world: a temporary directory, the real talos-sim binary running a fleet, a Git
// server with the profile repository, and the real talos-reconciler daemon pointed at both
// (--credentials-dir is the simulator's state directory, so each profile's credentials name its
// cluster). Everything a test or a benchmark needs to push a change and watch it roll out:
// waits with deadlines on the status branch and the journal, without sleeping.
//
// Every world has its own directory, loopback /24 (the simulator's), Git port and HTTP port,
// so worlds in parallel processes never meet.
//
// Thread-compatible: one thread owns a world.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/status.h"
#include "tests/support/e2e/daemon_process.h"
#include "tests/support/e2e/fleet_builder.h"
#include "tests/support/e2e/profile_repo.h"
#include "tests/support/e2e/sim_process.h"
#include "tests/support/e2e/waiter.h"

namespace tr::e2e {

class E2eWorld {
 public:
  // Uses `dir` (created when missing) for everything; removes nothing.
  explicit E2eWorld(std::filesystem::path dir);
  ~E2eWorld();

  // Starts talos-sim with these clusters and creates the profile repository and its server.
  absl::Status StartFleet(const std::vector<ClusterDef>& clusters,
                          const FleetOptions& options = {});
  // Writes the profiles (cluster name -> definition; the nodes come from the running fleet) and
  // `files` (repository path -> content; reconciler.yaml defaults to RepositoryDefaultsYaml()
  // on the first push) and pushes one commit; returns its id.
  std::string PushProfiles(const std::map<std::string, ProfileDef>& profiles,
                           const std::string& message,
                           std::map<std::string, std::string> files = {});
  // Starts talos-reconciler run against the fleet and the repository. `configure` may change
  // the options (extra flags, intervals) before the first start.
  absl::Status StartDaemon(const std::function<void(DaemonOptions&)>& configure = {});

  SimProcess& sim() { return *sim_; }
  ProfileRepo& repo() { return *repo_; }
  DaemonProcess& daemon() { return *daemon_; }
  const std::filesystem::path& dir() const { return dir_; }
  ChangeWatcher& watcher() { return watcher_; }

  // Waits until `condition` holds; false at the deadline.
  bool WaitUntil(std::chrono::milliseconds timeout, const std::function<bool()>& condition);
  // Waits until the status of `cluster` at the status branch tip satisfies `predicate`; returns
  // it. DeadlineExceeded (with the last status seen) at the deadline;
  // Aborted when the daemon exited meanwhile (unless `allow_daemon_down`).
  absl::StatusOr<core::ClusterStatus> WaitForStatus(
      const std::string& cluster, const std::function<bool(const core::ClusterStatus&)>& predicate,
      std::chrono::milliseconds timeout, bool allow_daemon_down = false);
  // The cluster is Ready on `talos` with the commit `applied` (any when empty) applied.
  absl::StatusOr<core::ClusterStatus> WaitForReady(const std::string& cluster,
                                                   const std::string& talos,
                                                   const std::string& applied,
                                                   std::chrono::milliseconds timeout);
  // The cluster is Ready on Kubernetes `kubernetes` with the commit `applied` applied.
  absl::StatusOr<core::ClusterStatus> WaitForKubernetesReady(const std::string& cluster,
                                                             const std::string& kubernetes,
                                                             const std::string& applied,
                                                             std::chrono::milliseconds timeout);

  // The journal so far.
  const std::vector<JournalLine>& Journal() { return sim_->Journal(); }

  // The end of the daemon's and the simulator's logs, for failure messages.
  std::string Diagnostics(size_t max_bytes = 6000) const;

 private:
  std::filesystem::path dir_;
  ChangeWatcher watcher_;
  std::unique_ptr<SimProcess> sim_;
  std::unique_ptr<ProfileRepo> repo_;
  std::unique_ptr<DaemonProcess> daemon_;
  bool defaults_pushed_ = false;
};

// A one-line summary of a status for messages: "UpgradingTalos talos 1.11.6->1.12.0
// in-progress 2/5: upgrading w-1 (2/5)".
std::string Summary(const core::ClusterStatus& status);

// "Ready", "UpgradeFailed", ...
std::string PhaseName(const core::ClusterStatus& status);

}  // namespace tr::e2e
