// talos-sim as a library: a running fleet of simulated Talos nodes, each serving the Talos API
// subset (MachineService, LifecycleService, ImageService, cosi.resource.State) over mutual TLS on
// its own loopback address, port 50000, with apid-like `node` routing and RBAC by the client
// certificate's organization; plus one fake Kubernetes API (HTTPS, bearer token) per cluster.
// Tests start a Fleet in-process; the talos-sim binary wraps the same class.
//
// On Start the fleet writes into its state directory, per cluster:
//   <cluster>/talosconfig             os:admin client certificate, endpoints = control planes
//   <cluster>/talosconfig-<role>      "reader", "operator", "etcd-backup" (os:reader, ...)
//   <cluster>/kubeconfig              points at the fake Kubernetes API with a bearer token
// and, for the whole fleet, journal.jsonl (see journal.h) and ready.json (where everything
// listens; see docs/talos-sim.md).
//
// Thread-safety: every method may be called from any thread while the fleet runs. Snapshots are
// copies; they do not change when the fleet does.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/observed.h"
#include "tests/sim/catalog/fleet_spec.h"
#include "tests/sim/node/node_snapshot.h"
#include "tests/sim/catalog/image_factory_server.h"
#include "tests/sim/common/journal.h"
#include "tests/sim/common/scheduler.h"

namespace tr::sim {

// Where to reach one cluster of the fleet.
struct ClusterAccess {
  std::string name;
  std::filesystem::path talosconfig;  // os:admin
  // By role: "os:admin", "os:operator", "os:reader", "os:etcd:backup".
  std::map<std::string, std::filesystem::path> talosconfig_by_role;
  std::filesystem::path kubeconfig;
  std::string kube_api_url;                          // "https://127.0.42.1:6443"
  std::vector<std::string> control_plane_addresses;  // "127.0.42.1" (API on :50000)
  std::vector<std::string> worker_addresses;
  std::string ca_pem;       // the Talos OS CA certificate (Ed25519)
  std::string kube_ca_pem;  // the fake Kubernetes API's CA certificate
};

struct FleetOptions {
  std::optional<double> time_scale;  // overrides FleetSpec::time_scale
  std::string address_prefix;        // overrides FleetSpec::address_prefix
  // The clock of every simulated duration; default a RealScheduler owned by the fleet.
  std::shared_ptr<Scheduler> scheduler;
  // Start the HTTP control endpoint on 127.0.0.1 (an ephemeral port): see control_url().
  bool control_endpoint = false;
  // Close a node's listener while its API is down (connections refused, as a real rebooting
  // machine) instead of answering UNAVAILABLE; overrides FleetSpec's setting.
  std::optional<bool> refuse_connections_while_down;
};

class Fleet {
 public:
  // Creates the PKI, writes talosconfigs and kubeconfigs into `state_dir` (created if missing),
  // binds every node on <address>:50000 and every fake Kubernetes API, and boots the nodes
  // (RUNNING and ready, no boot delay). Errors: InvalidArgument for a spec the simulator cannot
  // run; AlreadyExists when an explicit address is taken; Unavailable when no automatic prefix
  // could be bound; Internal for TLS or file-system failures.
  static absl::StatusOr<std::unique_ptr<Fleet>> Start(FleetSpec spec,
                                                      std::filesystem::path state_dir,
                                                      FleetOptions options = {});

  // Stops everything (as Stop()).
  ~Fleet();
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  // Closes all streams, stops the servers and the scheduler. Idempotent.
  void Stop();

  std::vector<std::string> ClusterNames() const;
  // NotFound for an unknown cluster.
  absl::StatusOr<ClusterAccess> Cluster(std::string_view cluster) const;

  // The node's loopback address ("127.0.42.3"). NotFound for an unknown node.
  absl::StatusOr<std::string> NodeAddress(std::string_view node) const;
  // NotFound for an unknown node.
  absl::StatusOr<NodeSnapshot> Node(std::string_view node) const;
  // Every node, in fleet-file order.
  std::vector<NodeSnapshot> Nodes() const;

  // Adds a fault to a node (journaled). NotFound for an unknown node.
  absl::Status InjectFault(std::string_view node, Fault fault);
  // Removes the node's faults of `kind` (all when nullopt). Clearing never_returns lets a node
  // that is stuck down boot. NotFound for an unknown node.
  absl::Status ClearFaults(std::string_view node, std::optional<FaultKind> kind = std::nullopt);

  // Blocks until `predicate` holds for the node's snapshot, or `timeout` (real time) passes.
  // NotFound for an unknown node, DeadlineExceeded on timeout.
  absl::Status WaitForNode(std::string_view node,
                           const std::function<bool(const NodeSnapshot&)>& predicate,
                           std::chrono::milliseconds timeout) const;

  const Journal& journal() const;
  const std::filesystem::path& state_dir() const;
  // "http://127.0.0.1:<port>" when FleetOptions::control_endpoint was set, else empty.
  std::string control_url() const;
  // The time scale in effect (spec value or override).
  double time_scale() const;

  // The simulated Image Factory ("http://127.0.0.1:<port>"; installers under its host:port).
  std::string factory_url() const;
  ImageFactory& factory() const;
  // Faults of the factory's HTTP API (image_factory_server.h); FactoryFaults{} clears them.
  void SetFactoryFaults(FactoryFaults faults);
  FactoryFaults factory_faults() const;

  class Impl;

 private:
  explicit Fleet(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tr::sim
