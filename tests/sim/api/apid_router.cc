#include "tests/sim/api/apid_router.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "fmt/format.h"
#include "fmt/ranges.h"

namespace tr::sim {
namespace {

const std::set<std::string>& KnownRoles() {
  static const std::set<std::string> roles = {
      "os:admin",          "os:operator",    "os:reader",      "os:etcd:backup",
      "os:image:verifier", "os:meta:writer", "os:impersonator"};
  return roles;
}

// Allowed roles per method (facts §1.2); os:admin may call everything.
const std::map<std::string, std::set<std::string>, std::less<>>& RoleTable() {
  static const std::set<std::string> admin = {"os:admin"};
  static const std::set<std::string> operators = {"os:admin", "os:operator"};
  static const std::set<std::string> backup = {"os:admin", "os:operator", "os:etcd:backup"};
  static const std::set<std::string> etcd_read = {"os:admin", "os:operator", "os:reader",
                                                  "os:etcd:backup"};
  static const std::set<std::string> readers = {"os:admin", "os:operator", "os:reader"};
  static const std::map<std::string, std::set<std::string>, std::less<>> table = {
      {"/machine.MachineService/Upgrade", admin},
      {"/machine.LifecycleService/Upgrade", admin},
      {"/machine.LifecycleService/Install", admin},
      {"/machine.MachineService/Rollback", admin},
      {"/machine.MachineService/Read", admin},
      {"/machine.MachineService/ApplyConfiguration", admin},
      {"/machine.MachineService/EtcdLeaveCluster", admin},
      {"/machine.MachineService/EtcdForfeitLeadership", admin},
      {"/machine.MachineService/EtcdRemoveMemberByID", admin},
      {"/machine.MachineService/Kubeconfig", admin},
      {"/machine.MachineService/Reboot", operators},
      {"/machine.MachineService/ImagePull", operators},
      {"/machine.ImageService/Pull", operators},
      {"/machine.MachineService/EtcdSnapshot", backup},
      {"/machine.MachineService/EtcdStatus", etcd_read},
      {"/machine.MachineService/EtcdMemberList", etcd_read},
  };
  return table;
}

// The services apid proxies one-to-many (director.go Director).
bool OneToManyProxied(std::string_view method) {
  for (std::string_view service :
       {"/machine.MachineService/", "/cluster.ClusterService/", "/inspect.InspectService/",
        "/storage.StorageService/", "/time.TimeService/"}) {
    if (method.starts_with(service)) return true;
  }
  return false;
}

std::string Strongest(const std::set<std::string>& roles) {
  for (const char* r : {"os:admin", "os:operator", "os:reader", "os:etcd:backup"}) {
    if (roles.contains(r)) return r;
  }
  return roles.empty() ? "none" : *roles.begin();
}

std::string Unreachable(const std::string& address) {
  return fmt::format(
      "connection error: desc = \"transport: Error while dialing: dial tcp {}:50000: connect: "
      "connection refused\"",
      address);
}

}  // namespace

absl::Status ApidRouter::HangWhileConnecting(const grpc::ServerContextBase& context,
                                             std::unique_lock<std::mutex>& lock,
                                             const SimNode& node) const {
  // apid's connection attempt to the node has not timed out yet (the node's address does not
  // answer while it comes up): the call waits without an answer, as a non-wait-for-ready gRPC
  // call does while its channel is connecting.
  while (cluster_->scheduler().Now() < node.forward_hangs_until) {
    if (context.IsCancelled() || cluster_->stopping()) {
      return absl::CancelledError("the caller gave up while apid was connecting to the node");
    }
    cluster_->cv().wait_for(lock, std::chrono::milliseconds(20));
  }
  return absl::UnavailableError(fmt::format(
      "connection error: desc = \"transport: Error while dialing: dial tcp {}:50000: i/o "
      "timeout\"",
      node.address));
}

bool AddressContainsPort(std::string_view target) {
  // As Go's net.SplitHostPort succeeding: "host:port" or "[v6]:port"; a bare IPv6 address
  // ("fd00::1", two or more colons) or "[fd00::1]" has no port.
  if (target.starts_with("[")) {
    const size_t close = target.find(']');
    return close != std::string_view::npos && close + 1 < target.size() && target[close + 1] == ':';
  }
  return std::count(target.begin(), target.end(), ':') == 1;
}

std::set<std::string> RolesFromCertificate(const std::string& pem) {
  std::set<std::string> roles;
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free);
  if (!cert) return roles;
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (int i = X509_NAME_get_index_by_NID(name, NID_organizationName, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(name, NID_organizationName, i)) {
    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    std::string org(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                    static_cast<size_t>(ASN1_STRING_length(data)));
    if (KnownRoles().contains(org)) roles.insert(org);
  }
  return roles;
}

namespace {

// A client presents the same few certificates on every call; parsing one each time was a third
// of the simulator's CPU. Bounded: past kMaxCached certificates it starts over.
std::set<std::string> CachedRoles(const std::string& pem) {
  constexpr std::size_t kMaxCached = 16384;
  static std::mutex mu;
  static std::unordered_map<std::string, std::set<std::string>> cache;
  {
    std::lock_guard lock(mu);
    if (auto it = cache.find(pem); it != cache.end()) return it->second;
  }
  std::set<std::string> roles = RolesFromCertificate(pem);
  std::lock_guard lock(mu);
  if (cache.size() >= kMaxCached) cache.clear();
  cache.emplace(pem, roles);
  return roles;
}

}  // namespace

bool Authorized(const std::set<std::string>& roles, std::string_view method) {
  if (roles.contains("os:admin")) return true;
  const auto& table = RoleTable();
  auto it = table.find(method);
  const std::set<std::string> readers = {"os:operator", "os:reader"};
  const std::set<std::string>& allowed = it == table.end() ? readers : it->second;
  for (const auto& r : roles) {
    if (allowed.contains(r)) return true;
  }
  return false;
}

std::vector<std::string> ApidRouter::MetadataValues(const grpc::ServerContextBase& context,
                                                    std::string_view key) {
  std::vector<std::string> values;
  for (auto [it, end] =
           context.client_metadata().equal_range(grpc::string_ref(key.data(), key.size()));
       it != end; ++it) {
    values.emplace_back(it->second.data(), it->second.size());
  }
  return values;
}

void ApidRouter::JournalRefusalLocked(std::string_view method, const std::string& role,
                                      const absl::Status& status) const {
  cluster_->JournalCallLocked(*endpoint_, std::string(method), role,
                              std::string(absl::StatusCodeToString(status.code())), "",
                              std::string(status.message()));
}

Route ApidRouter::EntryRoute(const grpc::ServerContextBase& context) const {
  Route route;
  route.cluster = cluster_;
  route.endpoint = endpoint_;
  route.target = endpoint_;
  auto auth = context.auth_context();
  if (auth) {
    for (const auto& value : auth->FindPropertyValues("x509_pem_cert")) {
      route.roles = CachedRoles(std::string(value.data(), value.size()));
    }
  }
  route.role = Strongest(route.roles);
  return route;
}

absl::Status ApidRouter::EntryRefusal(const Route& route, std::string_view method) const {
  if (!endpoint_->api_reachable() || cluster_->stopping()) {
    return absl::UnavailableError(Unreachable(endpoint_->address));
  }
  if (!Authorized(route.roles, method)) return absl::PermissionDeniedError("not authorized");
  return absl::OkStatus();
}

absl::StatusOr<Route> ApidRouter::ResolveTarget(const grpc::ServerContextBase& context,
                                                std::unique_lock<std::mutex>& lock, Route route,
                                                const std::string& target) const {
  if (target.empty() || AddressContainsPort(target)) {
    return absl::InternalError(fmt::format("invalid target \"{}\"", target));
  }
  auto [cluster, node] = directory_(target);
  if (node == nullptr) return absl::UnavailableError(Unreachable(target));
  if (cluster != cluster_) {
    return absl::UnavailableError(
        "connection error: desc = \"transport: authentication handshake failed: remote error: "
        "tls: bad certificate\"");
  }
  if (!node->api_reachable()) return absl::UnavailableError(Unreachable(node->address));
  if (node != endpoint_ && cluster_->scheduler().Now() < node->forward_hangs_until) {
    ++node->hanging_calls;
    cluster_->NotifyLocked();
    absl::Status hung = HangWhileConnecting(context, lock, *node);
    --node->hanging_calls;
    cluster_->NotifyLocked();
    return hung;
  }
  // This apid's connection to a node that rebooted is still in reconnect backoff
  // (backend/apid.go: up to 15 s, 20 s minimum connect timeout): calls fail as the dial did.
  if (node != endpoint_ && cluster_->scheduler().Now() < node->forwardable_from) {
    return absl::UnavailableError(Unreachable(node->address));
  }
  route.target = node;
  route.forwarded = node != endpoint_;
  return route;
}

absl::StatusOr<Route> ApidRouter::Resolve(const grpc::ServerContextBase& context,
                                          std::string_view method) const {
  Route route = EntryRoute(context);
  const auto& md = context.client_metadata();
  const std::vector<std::string> targets = MetadataValues(context, "node");
  const bool one_to_many = OneToMany(context);
  const bool proxied = md.find("proxyfrom") != md.end();
  std::unique_lock lock(cluster_->mu());
  auto refuse = [&](absl::Status status) -> absl::StatusOr<Route> {
    JournalRefusalLocked(method, route.role, status);
    return status;
  };
  if (absl::Status entry = EntryRefusal(route, method); !entry.ok()) return refuse(entry);
  if (proxied) return route;
  if (one_to_many && !OneToManyProxied(method)) {
    return refuse(absl::InvalidArgumentError(
        fmt::format("one-2-many proxying is not supported for method {}", method)));
  }
  if (one_to_many) {
    return refuse(absl::UnimplementedError(fmt::format(
        "talos-sim simulates one-to-many proxying (nodes metadata) for {} only; send one node "
        "value",
        fmt::join(kOneToManyMethods, ", "))));
  }
  if (targets.empty()) return route;
  if (targets.size() > 1) {
    return refuse(absl::InvalidArgumentError("node metadata must be single-valued"));
  }
  const std::string& target = targets.front();
  // A worker has no backend factory: a local target is served, anything else is refused before
  // the target is even looked at (director.go singleDirector).
  if (!endpoint_->is_control_plane()) {
    if (target == endpoint_->address || target == endpoint_->spec.name) return route;
    return refuse(absl::PermissionDeniedError("no request forwarding"));
  }
  absl::StatusOr<Route> resolved = ResolveTarget(context, lock, route, target);
  if (!resolved.ok()) return refuse(resolved.status());
  return resolved;
}

bool ApidRouter::OneToMany(const grpc::ServerContextBase& context) {
  return context.client_metadata().find("nodes") != context.client_metadata().end();
}

absl::StatusOr<Fanout> ApidRouter::ResolveMany(const grpc::ServerContextBase& context,
                                               std::string_view method) const {
  Route route = EntryRoute(context);
  const auto& md = context.client_metadata();
  const std::vector<std::string> targets = MetadataValues(context, "nodes");
  std::unique_lock lock(cluster_->mu());
  auto refuse = [&](absl::Status status) -> absl::StatusOr<Fanout> {
    JournalRefusalLocked(method, route.role, status);
    return status;
  };
  if (absl::Status entry = EntryRefusal(route, method); !entry.ok()) return refuse(entry);
  if (md.count("node") > 1) {
    return refuse(absl::InvalidArgumentError("node metadata must be single-valued"));
  }
  const auto is_local = [&](const std::string& target) {
    return target == endpoint_->address || target == endpoint_->spec.name;
  };
  Fanout fanout;
  fanout.role = route.role;
  // A worker has no backend factory: one `nodes` value that is the worker itself is served
  // there as a one-to-one call, anything else is refused (director.go Director,
  // aggregateDirector).
  if (!endpoint_->is_control_plane()) {
    if (targets.size() == 1 && is_local(targets.front())) {
      fanout.aggregate = false;
      fanout.targets.push_back({targets.front(), route});
      return fanout;
    }
    return refuse(absl::PermissionDeniedError("no request forwarding"));
  }
  // The backends are made before any is called: a target no backend can be made for fails the
  // whole call (aggregateDirector); one that cannot be dialled answers an error message.
  for (const std::string& target : targets) {
    if (target.empty() || AddressContainsPort(target)) {
      return refuse(absl::InternalError(fmt::format("invalid target \"{}\"", target)));
    }
  }
  for (const std::string& target : targets) {
    fanout.targets.push_back({target, ResolveTarget(context, lock, route, target)});
  }
  return fanout;
}

grpc::Status ToGrpc(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

void JournalCall(const Route& route, std::string_view method, const grpc::Status& status) {
  static const char* kNames[] = {"OK",
                                 "CANCELLED",
                                 "UNKNOWN",
                                 "INVALID_ARGUMENT",
                                 "DEADLINE_EXCEEDED",
                                 "NOT_FOUND",
                                 "ALREADY_EXISTS",
                                 "PERMISSION_DENIED",
                                 "RESOURCE_EXHAUSTED",
                                 "FAILED_PRECONDITION",
                                 "ABORTED",
                                 "OUT_OF_RANGE",
                                 "UNIMPLEMENTED",
                                 "INTERNAL",
                                 "UNAVAILABLE",
                                 "DATA_LOSS",
                                 "UNAUTHENTICATED"};
  const int code = static_cast<int>(status.error_code());
  std::lock_guard lock(route.cluster->mu());
  route.cluster->JournalCallLocked(*route.target, std::string(method), route.role,
                                   code >= 0 && code <= 16 ? kNames[code] : "UNKNOWN",
                                   route.forwarded ? route.endpoint->spec.name : "",
                                   status.error_message());
}

std::string GoStatusText(const grpc::Status& status) {
  // grpc-go's codes.Code names (codes/code_string.go), by number.
  static const char* kGoNames[] = {
      "OK",       "Canceled",       "Unknown",          "InvalidArgument",   "DeadlineExceeded",
      "NotFound", "AlreadyExists",  "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
      "Aborted",  "OutOfRange",     "Unimplemented",    "Internal",          "Unavailable",
      "DataLoss", "Unauthenticated"};
  const int code = static_cast<int>(status.error_code());
  return fmt::format("rpc error: code = {} desc = {}",
                     code >= 0 && code <= 16 ? kGoNames[code] : "Unknown", status.error_message());
}

void JournalFanoutPart(const ApidRouter& router, const Fanout& fanout, const FanoutTarget& target,
                       std::string_view method, const grpc::Status& status) {
  const std::string& fanout_role = fanout.role;
  SimCluster& cluster = *router.cluster();
  std::lock_guard lock(cluster.mu());
  const std::string code =
      absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()));
  if (target.route.ok()) {
    cluster.JournalCallLocked(*target.route->target, std::string(method), target.route->role, code,
                              target.route->forwarded ? router.endpoint()->spec.name : "",
                              std::string(kFanoutPart) + status.error_message());
    return;
  }
  // Not dialled: apid's own node says so, as a refused forwarded call is journaled.
  cluster.JournalCallLocked(
      *router.endpoint(), std::string(method), fanout_role, code, "",
      fmt::format("{}{}: {}", kFanoutPart, target.target, status.error_message()));
}

void JournalFanout(const ApidRouter& router, std::string_view method, const Fanout& fanout) {
  std::vector<std::string> targets;
  for (const FanoutTarget& t : fanout.targets) targets.push_back(t.target);
  SimCluster& cluster = *router.cluster();
  std::lock_guard lock(cluster.mu());
  cluster.JournalCallLocked(*router.endpoint(), std::string(method), fanout.role, "OK", "",
                            fmt::format("{}{}", kFanoutCall, fmt::join(targets, ",")));
}

}  // namespace tr::sim
