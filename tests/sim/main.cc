// talos-sim: runs a simulated Talos fleet until SIGTERM or SIGINT.
//   talos-sim --fleet FILE --state-dir DIR [--time-scale X] [--address-prefix 127.a.b]
// Prints where everything listens and writes DIR/ready.json (see docs/talos-sim.md).
#include <signal.h>

#include <iostream>

#include "CLI/CLI.hpp"
#include "absl/synchronization/mutex.h"
#include "base/futex_hash.h"
#include "tests/sim/control_server.h"
#include "tests/sim/fleet.h"

int main(int argc, char** argv) {
  CLI::App app{"talos-sim: a simulated Talos fleet with a fake Kubernetes API"};
  std::string fleet_file, state_dir, prefix;
  double time_scale = 0;
  app.add_option("--fleet", fleet_file, "fleet YAML file")->required();
  app.add_option("--state-dir", state_dir, "directory for talosconfigs, kubeconfigs, journal")
      ->required();
  app.add_option("--time-scale", time_scale, "multiply every simulated duration (overrides file)");
  app.add_option("--address-prefix", prefix, "first three octets of node addresses, or auto");
  CLI11_PARSE(app, argc, argv);
#ifdef NDEBUG
  // Debian's abseil checks the lock order on every absl::Mutex lock, and gRPC takes several
  // per call: 4% of a 1,000-node fleet's gRPC thread samples were in the lock-order graph.
  // The daemon turns the check off the same way; debug builds keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif

  // Block the stop signals before any thread starts, then wait for them synchronously.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto spec = tr::sim::FleetSpec::Load(fleet_file);
  if (!spec.ok()) {
    std::cerr << "talos-sim: " << spec.status().message() << "\n";
    return 2;
  }
  tr::sim::FleetOptions options;
  if (time_scale > 0) options.time_scale = time_scale;
  options.address_prefix = prefix;
  options.control_endpoint = true;
  auto fleet = tr::sim::Fleet::Start(std::move(*spec), state_dir, options);
  if (!fleet.ok()) {
    std::cerr << "talos-sim: " << fleet.status().message() << "\n";
    return 1;
  }
  // A fleet is thousands of threads (every node's gRPC server, every Kubernetes API server's
  // pool), all started by now; docs/benchmarks.md has the simulator's CPU with and without.
  // A kernel without a private hash uses its system-wide one: nothing to do then.
  (void)tr::GrowFutexHash();
  for (const auto& name : (*fleet)->ClusterNames()) {
    auto access = (*fleet)->Cluster(name);
    std::cout << "cluster " << name << ": talosconfig " << access->talosconfig.string()
              << ", kubeconfig " << access->kubeconfig.string() << ", kube api "
              << access->kube_api_url << "\n";
  }
  for (const auto& node : (*fleet)->Nodes()) {
    std::cout << "node " << node.name << " (" << tr::sim::NodeRoleName(node.role) << ", "
              << node.talos_tag << ") at " << node.address << ":50000\n";
  }
  std::cout << "factory " << (*fleet)->factory_url() << "\n";
  std::cout << "control " << (*fleet)->control_url() << "\nready "
            << ((*fleet)->state_dir() / "ready.json").string() << std::endl;
  int received = 0;
  sigwait(&signals, &received);
  std::cout << "talos-sim: signal " << received << ", stopping" << std::endl;
  (*fleet)->Stop();
  return 0;
}
