// The real `talos-sim` binary as a child process, for end-to-end tests and benchmarks: started
// with a fleet file in its own directory, ready once it wrote ready.json (where every node and
// talosconfig is), stopped with SIGTERM. The journal (journal.jsonl, one JSON line per API call
// and per state change) is read incrementally from the file; faults are injected through the
// simulator's control endpoint.
//
// The fleet binds its nodes on a loopback /24 of its own ("address_prefix: auto" picks one from
// the simulator's pid and retries when taken), so parallel tests never share node addresses;
// tests write their profiles from the addresses in ready.json.
//
// Thread-compatible: one thread owns a SimProcess.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gitsource/subprocess.h"
#include "nlohmann/json.hpp"

namespace tr::e2e {

struct SimNodeInfo {
  std::string name;
  std::string address;  // "127.a.b.c"; the Talos API is on port 50000
  std::string role;     // "controlplane" | "worker"
};

struct SimClusterInfo {
  std::string name;
  std::vector<SimNodeInfo> nodes;  // in fleet-file order
  std::filesystem::path talosconfig;

  std::vector<std::string> ControlPlaneAddresses() const;
  std::vector<std::string> NodeNames() const;
  std::vector<std::string> WorkerNames() const;
  std::vector<std::string> ControlPlaneNames() const;
};

// One journal line (see docs/talos-sim.md, "The journal").
struct JournalLine {
  uint64_t seq = 0;
  std::chrono::system_clock::time_point time;
  bool call = false;  // an API call (else a state change)
  std::string cluster;
  std::string node;
  std::string what;  // "/machine.MachineService/Upgrade", "kube:PATCH /api/v1/nodes/w-0", "down"
  std::string code;  // calls: "OK", "UNAVAILABLE", "429", ...
  std::string detail;
};

// The path of a binary built in this build tree ("tests/sim/talos-sim").
std::filesystem::path BuiltBinary(const std::string& relative);

class SimProcess {
 public:
  // Writes `fleet_yaml` to <dir>/fleet.yaml and runs talos-sim with state directory <dir>/sim and
  // its output in <dir>/sim.log; returns once ready.json is written. Unavailable when it exits
  // or is not ready within `timeout` (the message carries its log).
  static absl::StatusOr<std::unique_ptr<SimProcess>> Start(
      const std::filesystem::path& dir, const std::string& fleet_yaml,
      std::chrono::milliseconds timeout = std::chrono::seconds(60));
  ~SimProcess();
  SimProcess(const SimProcess&) = delete;
  SimProcess& operator=(const SimProcess&) = delete;

  // The state directory: <cluster>/talosconfig for each cluster, so it is also the reconciler's
  // --credentials-dir when each profile's credentials equals its cluster name.
  const std::filesystem::path& state_dir() const { return state_dir_; }
  const std::vector<SimClusterInfo>& clusters() const { return clusters_; }
  // The cluster named `name`; aborts the test binary when there is none (a test bug).
  const SimClusterInfo& cluster(const std::string& name) const;
  double time_scale() const { return time_scale_; }
  std::string address_prefix() const;  // "127.a.b", the /24 its nodes live in
  std::string log() const;

  // Every journal line written so far (complete lines), in order. New lines are read from where
  // the previous call stopped.
  const std::vector<JournalLine>& Journal();

  // POST /v1/nodes/<node>/faults with `fault_json` ({"kind":"never_returns","count":1}).
  absl::Status InjectFault(const std::string& node, const std::string& fault_json);
  // DELETE /v1/nodes/<node>/faults (every fault).
  absl::Status ClearFaults(const std::string& node);
  // The simulated Image Factory: its URL, and its faults ("internal_error", "hang", "slow").
  const std::string& factory_url() const { return factory_url_; }
  absl::Status SetFactoryFault(const std::string& kind);
  absl::Status ClearFactoryFaults();
  // A release the factory builds from now on ("v1.14.0").
  absl::Status AddFactoryRelease(const std::string& tag);
  // Marks a release broken at the factory (POST /v1/factory/broken).
  absl::Status MarkFactoryReleaseBroken(const std::string& tag);
  // GET /v1/nodes/<node>: the node's snapshot (talos_tag, up, boot_id, ...).
  absl::StatusOr<nlohmann::json> Node(const std::string& node);
  // GET /v1/factory: url, versions, broken, broken_reads, faults.
  absl::StatusOr<nlohmann::json> Factory();

  // SIGTERM and wait; Internal unless it exits 0.
  absl::Status Stop();
  bool running() { return process_.has_value() && !process_->WaitFor({}).has_value(); }
  pid_t pid() const { return process_ ? process_->pid() : -1; }

 private:
  SimProcess() = default;
  absl::Status Control(const std::string& path, const std::string& body, const std::string& what);
  absl::Status ReadReady();

  std::filesystem::path dir_;
  std::filesystem::path state_dir_;
  std::string control_url_;
  std::string factory_url_;
  double time_scale_ = 1;
  std::vector<SimClusterInfo> clusters_;
  std::optional<gitsource::Subprocess> process_;
  std::vector<JournalLine> journal_;
  uint64_t journal_offset_ = 0;
};

}  // namespace tr::e2e
