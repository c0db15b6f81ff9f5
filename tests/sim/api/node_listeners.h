// The gRPC listeners of a fleet's nodes. Each node's server is bound at start; with
// `refuse_while_down`, a supervisor thread per cluster closes a node's listener while its API is
// unreachable (rebooting, never_returns, api_unreachable) and binds it again when the node is back,
// so clients see refused TCP connections like with a real machine. Without it the listener stays
// bound and the node answers UNAVAILABLE.
//
// Thread-safety: Add before Supervise; Stop once, from the owning thread.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/sim/api/grpc_poller.h"
#include "tests/sim/api/node_server.h"
#include "tests/sim/api/stream_pump.h"

namespace tr::sim {

class NodeListeners {
 public:
  NodeListeners(NodeDirectory directory, bool refuse_while_down)
      : directory_(std::move(directory)), refuse_while_down_(refuse_while_down) {}
  ~NodeListeners() { Stop(); }

  // Binds the node's listener now. Unavailable when its address is taken.
  absl::Status Add(SimCluster* cluster, SimNode* node, CertifiedKey cert, std::string ca_pem);
  // Starts the supervisor threads (no-op unless refuse_while_down).
  void Supervise();
  // Stops supervising and shuts every listener down.
  void Stop();

 private:
  struct Listener {
    SimCluster* cluster;
    SimNode* node;
    CertifiedKey cert;
    std::string ca_pem;
    std::unique_ptr<NodeServer> server;
  };
  void SuperviseCluster(SimCluster* cluster);

  GrpcPoller poller_;  // first: it outlives the servers
  NodeDirectory directory_;
  bool refuse_while_down_;
  // One per cluster, shared by its node servers: a thread per cluster with an open stream
  // rather than one per node. Filled by Add, only read after.
  std::map<SimCluster*, std::shared_ptr<StreamPump>> pumps_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
};

}  // namespace tr::sim
