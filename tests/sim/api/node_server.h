// One simulated node's listener: a gRPC server on <address>:50000 with mutual TLS (client
// certificates required and verified against the cluster's Talos OS CA) serving the node's
// services. SO_REUSEPORT is off, so an address already taken by another process fails the bind
// instead of silently sharing it.
//
// Thread-safety: Start/Shutdown from one thread; the server runs on gRPC's threads.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/server.h"
#include "tests/sim/api/node_services.h"
#include "tests/sim/common/pki.h"

namespace tr::sim {

class NodeServer {
 public:
  // Unavailable when the address cannot be bound. `pump` serves the server's Events streams and
  // COSI watches: its cluster's, shared by the cluster's node servers (stream_pump.h).
  static absl::StatusOr<std::unique_ptr<NodeServer>> Start(SimCluster* cluster, SimNode* node,
                                                           NodeDirectory directory,
                                                           const CertifiedKey& server_cert,
                                                           const std::string& ca_pem,
                                                           std::shared_ptr<StreamPump> pump,
                                                           int port = 50000);
  ~NodeServer();
  // Cancels open calls after a short grace period and stops the server.
  void Shutdown();

 private:
  NodeServer(ApidRouter router, const std::shared_ptr<StreamPump>& pump)
      : machine_(router, pump), lifecycle_(router), image_(router), cosi_(router, pump) {}

  MachineServiceImpl machine_;
  LifecycleServiceImpl lifecycle_;
  ImageServiceImpl image_;
  CosiStateImpl cosi_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace tr::sim
