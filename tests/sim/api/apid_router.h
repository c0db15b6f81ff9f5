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
#include <vector>

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

// The methods talos-sim serves one-to-many (`nodes` metadata); apid proxies every method of
// MachineService, ClusterService, InspectService, StorageService and TimeService so.
inline constexpr std::string_view kOneToManyMethods[] = {"/machine.MachineService/EtcdStatus"};

// One target of a one-to-many call: the route its part is served on, or why apid could not
// dial it (answered to the client as an error message, not as the call's status).
struct FanoutTarget {
  std::string target;  // as the client named it: the reply's metadata.hostname
  absl::StatusOr<Route> route;
};

// A one-to-many call's targets. `aggregate` false: a worker serves its one local `nodes` value
// as a one-to-one call (no metadata added to the reply).
struct Fanout {
  bool aggregate = true;
  std::vector<FanoutTarget> targets;
  std::string role;  // the caller's strongest role, for the journal
};

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

  // Whether the call carries `nodes` metadata: apid proxies it one-to-many (director.go), even
  // beside a `node` value.
  static bool OneToMany(const grpc::ServerContextBase& context);

  // The targets of a one-to-many call, or the status the whole call is answered with: the
  // endpoint unreachable or the caller not authorized (as Resolve), PermissionDenied on a
  // worker, Internal for a target no backend can be made for. Journals those refusals; a
  // target's own failure is its FanoutTarget's. May block while a target hangs.
  absl::StatusOr<Fanout> ResolveMany(const grpc::ServerContextBase& context,
                                     std::string_view method) const;

  SimCluster* cluster() const { return cluster_; }
  SimNode* endpoint() const { return endpoint_; }

 private:
  // Waits (the lock released meanwhile) until the node's forward_hangs_until, then answers what
  // apid does when its connection attempt times out: Unavailable `i/o timeout`. Cancelled when
  // the caller gives up first or the fleet stops.
  // Every value of the call's `key` metadata, in order.
  static std::vector<std::string> MetadataValues(const grpc::ServerContextBase& context,
                                                 std::string_view key);
  // Journals a call this endpoint's apid refused with `status`; the cluster lock is held.
  void JournalRefusalLocked(std::string_view method, const std::string& role,
                            const absl::Status& status) const;
  // The route of a call as it enters this endpoint's apid, served here.
  Route EntryRoute(const grpc::ServerContextBase& context) const;
  // What this endpoint's apid refuses every call with (unreachable, not authorized); OK
  // otherwise.
  absl::Status EntryRefusal(const Route& route, std::string_view method) const;
  // `route` forwarded to `target` (a control plane's backend factory and dial), or the error
  // apid answers for it. Not journaled. May block while the target hangs.
  absl::StatusOr<Route> ResolveTarget(const grpc::ServerContextBase& context,
                                      std::unique_lock<std::mutex>& lock, Route route,
                                      const std::string& target) const;
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

// The message grpc-go's status error prints (`err.Error()`), which apid puts in a one-to-many
// reply's metadata.error: "rpc error: code = Unavailable desc = ...".
std::string GoStatusText(const grpc::Status& status);

// Journals the part of a one-to-many call `target` served (forwarded from the endpoint, or
// refused there when it could not be dialled), marked as a part: a client made one call
// (tests/support/e2e counts calls without the parts).
void JournalFanoutPart(const ApidRouter& router, const Fanout& fanout, const FanoutTarget& target,
                       std::string_view method, const grpc::Status& status);
// Journals the one-to-many call a client made, on the endpoint it dialled.
void JournalFanout(const ApidRouter& router, std::string_view method, const Fanout& fanout);

}  // namespace tr::sim
