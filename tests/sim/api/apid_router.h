// apid's part of a simulated node: who is calling (RBAC roles from the client certificate's
// Subject Organization), may they call this method (the role table of facts §1.2), and which
// node serves the call (the `node` metadata rules of facts §1.3). Forwarding is in-process: the
// target node's handler runs with the caller's role, so its reply, stream, status and trailers
// reach the client unchanged.
//
// Thread-safety: immutable after construction; Route may be called from any thread.
#pragma once

#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "grpcpp/server_context.h"
#include "tests/sim/node/sim_cluster.h"

namespace tr::sim {

// Finds a node of the fleet by address or name; {nullptr, nullptr} when there is none.
using NodeDirectory = std::function<std::pair<SimCluster*, SimNode*>(std::string_view target)>;

struct Route {
  SimCluster* cluster = nullptr;
  SimNode* target = nullptr;    // the node that serves the call
  SimNode* endpoint = nullptr;  // the node the client dialled
  std::string role;             // the caller's strongest role, for the journal
  std::set<std::string> roles;
  bool forwarded = false;
};

// The roles in the PEM certificate's Subject Organization entries that Talos knows.
std::set<std::string> RolesFromCertificate(const std::string& pem);

// Whether a `node` target carries a port (apid answers Internal `invalid target "..."`); a bare
// IPv6 address does not.
bool AddressContainsPort(std::string_view target);

// True when one of `roles` may call `method` ("/machine.MachineService/Upgrade").
bool Authorized(const std::set<std::string>& roles, std::string_view method);

class ApidRouter {
 public:
  ApidRouter(SimCluster* cluster, SimNode* endpoint, NodeDirectory directory)
      : cluster_(cluster), endpoint_(endpoint), directory_(std::move(directory)) {}

  // The route of a call to `method`, or the status apid would answer with: Unavailable when the
  // endpoint or the target is not reachable (after hanging through the target's apid_hang
  // window), PermissionDenied ("not authorized", "no request forwarding"), InvalidArgument for
  // bad `node` metadata. Journals refusals. May block while a forwarded call hangs.
  absl::StatusOr<Route> Resolve(const grpc::ServerContextBase& context,
                                std::string_view method) const;

  SimCluster* cluster() const { return cluster_; }
  SimNode* endpoint() const { return endpoint_; }

 private:
  // Waits (the lock released meanwhile) until the node's forward_hangs_until, then answers what
  // apid does when its connection attempt times out: Unavailable `i/o timeout`. Cancelled when
  // the caller gives up first or the fleet stops.
  absl::Status HangWhileConnecting(const grpc::ServerContextBase& context,
                                   std::unique_lock<std::mutex>& lock, const SimNode& node) const;

  SimCluster* cluster_;
  SimNode* endpoint_;
  NodeDirectory directory_;
};

// absl::Status -> grpc::Status with the same code and message.
grpc::Status ToGrpc(const absl::Status& status);

// Journals a finished call on the route's target node.
void JournalCall(const Route& route, std::string_view method, const grpc::Status& status);

}  // namespace tr::sim
