// cosi.resource.State (Get, List, Watch) of a simulated node (facts §5). Unknown types and
// namespaces are refused; sensitive resources (MachineConfig) need os:admin. Watch first sends an
// empty response (the watch is established), then the initial state (one resource: its current
// state, or a DESTROYED tombstone; a kind with bootstrap_contents: every resource by id, then
// BOOTSTRAPPED carrying a tombstone of the kind), or with tail_events the last changes instead,
// then changes until the node or the endpoint forwarding the stream goes down (UNAVAILABLE).
// One event per response, or batches with `aggregated`.
//
// Watch runs on gRPC's callback API, so an open watch holds no thread: its WatchFeed keeps its
// place in the node's change log, and its cluster's StreamPump hands it what changed
// (stream_pump.h).
#include <algorithm>
#include <deque>

#include "fmt/format.h"
#include "tests/sim/api/cosi_types.h"
#include "tests/sim/api/node_services.h"
#include "tests/sim/api/stream_pump.h"

namespace tr::sim {
namespace {

namespace cr = cosi::resource;

void SetTime(google::protobuf::Timestamp* ts, WallTime t) {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  ts->set_seconds(ns / 1'000'000'000);
  ts->set_nanos(static_cast<int32_t>(ns % 1'000'000'000));
}

void ToProto(const CosiResource& r, cr::Resource* out) {
  auto* m = out->mutable_metadata();
  m->set_namespace_(r.ns);
  m->set_type(r.type);
  m->set_id(r.id);
  m->set_version(std::to_string(r.version));
  m->set_phase("running");
  SetTime(m->mutable_created(), r.created);
  SetTime(m->mutable_updated(), r.updated);
  out->mutable_spec()->set_proto_spec(r.proto_spec);
  out->mutable_spec()->set_yaml_spec(r.yaml_spec);
}

// apid's access policy (internal/app/resources/access.go), in its order: the type, the
// sensitivity, then the namespace.
grpc::Status CheckAccess(const Route& route, const std::string& ns, const std::string& type) {
  int minor = 0;
  {
    std::lock_guard lock(route.cluster->mu());
    minor = TalosMinor(*route.target);
  }
  // The node's own resource definitions: a type from a later Talos is as unknown as a typo.
  if (!KnownCosiType(type, minor)) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        fmt::format("resource type \"{}\" is not supported", type));
  }
  if (type == "MachineConfigs.config.talos.dev" && !route.roles.contains("os:admin")) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "not authorized");
  }
  if (!KnownCosiNamespace(ns, minor)) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        fmt::format("namespace \"{}\" is not supported", ns));
  }
  return grpc::Status::OK;
}

grpc::Status NotFound(const std::string& ns, const std::string& type, const std::string& id) {
  return grpc::Status(grpc::StatusCode::NOT_FOUND,
                      fmt::format("resource {}({}/{}@undefined) doesn't exist", type, ns, id));
}

}  // namespace

grpc::Status CosiStateImpl::Get(grpc::ServerContext* ctx, const cr::GetRequest* request,
                                cr::GetResponse* response) {
  return HandleCall(router_, ctx, "/cosi.resource.State/Get", [&](const Route& r) {
    if (auto st = CheckAccess(r, request->namespace_(), request->type()); !st.ok()) return st;
    std::lock_guard lock(r.cluster->mu());
    auto it = r.target->resources.find(
        fmt::format("{}/{}/{}", request->namespace_(), request->type(), request->id()));
    if (it == r.target->resources.end()) {
      return NotFound(request->namespace_(), request->type(), request->id());
    }
    ToProto(it->second, response->mutable_resource());
    return grpc::Status::OK;
  });
}

grpc::Status CosiStateImpl::List(grpc::ServerContext* ctx, const cr::ListRequest* request,
                                 grpc::ServerWriter<cr::ListResponse>* writer) {
  return HandleCall(router_, ctx, "/cosi.resource.State/List", [&](const Route& r) {
    if (auto st = CheckAccess(r, request->namespace_(), request->type()); !st.ok()) return st;
    std::vector<cr::ListResponse> items;
    {
      std::lock_guard lock(r.cluster->mu());
      for (const auto& [key, res] : r.target->resources) {
        if (res.ns != request->namespace_() || res.type != request->type()) continue;
        ToProto(res, items.emplace_back().mutable_resource());
      }
    }
    for (const auto& item : items) {
      if (!writer->Write(item)) return grpc::Status::CANCELLED;
    }
    return grpc::Status::OK;
  });
}

namespace {

constexpr char kWatchMethod[] = "/cosi.resource.State/Watch";

// One open watch: what it asks for and its place in the node's change log.
class WatchFeed final : public StreamFeed<cr::WatchResponse> {
 public:
  WatchFeed(const cr::WatchRequest& request, Route resolved)
      : StreamFeed(std::move(resolved)),
        ns_(request.namespace_()),
        type_(request.type()),
        id_(request.has_id() ? std::optional<std::string>(request.id()) : std::nullopt),
        aggregated_(!id_ && request.options().aggregated()) {}

  bool Matches(const CosiResource& res) const {
    return res.ns == ns_ && res.type == type_ && (!id_ || res.id == *id_);
  }
  // Appends an event to `out`: a response of its own, or the batch's with `aggregated`.
  cr::Event* AddEvent(std::vector<cr::WatchResponse>& out, cr::EventType event_type) const {
    if (!aggregated_ || out.empty() || out.back().event_size() == 0) out.emplace_back();
    auto* ev = out.back().add_event();
    ev->set_event_type(event_type);
    return ev;
  }
  // A resource carrying only metadata: the kind's (id "") or a missing resource's.
  void Tombstone(cr::Event* ev, const std::string& id) const {
    auto* m = ev->mutable_resource()->mutable_metadata();
    m->set_namespace_(ns_);
    m->set_type(type_);
    m->set_id(id);
    m->set_version("undefined");
    m->set_phase("running");
  }

  // With the cluster lock held: the changes of `log` from the cursor on, appended to `out`.
  void AppendLogLocked(const std::deque<CosiChange>& log, std::vector<cr::WatchResponse>& out);

  uint64_t cursor = 0;  // under the cluster lock

 private:
  void AppendLocked(const SimNode& target, NodeLife life,
                    std::vector<cr::WatchResponse>& out) override {
    if (life == NodeLife::kGone) return;
    AppendLogLocked(life == NodeLife::kSame ? target.cosi_log : target.last_life_cosi_log, out);
  }

  const std::string ns_;
  const std::string type_;
  const std::optional<std::string> id_;
  const bool aggregated_;
};

void WatchFeed::AppendLogLocked(const std::deque<CosiChange>& log,
                                std::vector<cr::WatchResponse>& out) {
  for (const auto& change : log) {
    if (change.seq < cursor) continue;
    cursor = change.seq + 1;
    if (!Matches(change.resource)) continue;
    auto* ev = AddEvent(out, static_cast<cr::EventType>(change.type));
    ToProto(change.resource, ev->mutable_resource());
    if (change.old) ToProto(*change.old, ev->mutable_old());
  }
}

// The options a node refuses, as cosi-project/runtime server.go and inmem/collection.go do.
grpc::Status CheckWatchOptions(const cr::WatchRequest& request) {
  const auto& options = request.options();
  // A single-resource watch has no bootstrap contents; a kind watch cannot have both bootstrap
  // contents and tail events (a plain error: Unknown on the wire).
  if (request.has_id() && options.bootstrap_contents()) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                        "bootstrap contents is not implemented for resource watch");
  }
  if (!request.has_id() && options.bootstrap_contents() && options.tail_events() > 0) {
    return grpc::Status(grpc::StatusCode::UNKNOWN,
                        "cannot use BootstrapContents with TailEvents and StartFromBookmark "
                        "options");
  }
  return grpc::Status::OK;
}

// With the cluster lock held: the feed's first responses (the empty "watch established" one,
// then the initial state or the tailed changes) and its place in the change log.
std::vector<cr::WatchResponse> StartFeedLocked(WatchFeed& feed, const cr::WatchRequest& request) {
  const SimNode& target = *feed.route.target;
  feed.cursor = target.next_cosi_seq;
  std::vector<cr::WatchResponse> out(1);
  const int tail = std::max(0, request.options().tail_events());
  if (tail > 0) {
    // The last `tail` changes of the kind (of the one resource), replayed instead of the
    // initial state (inmem/collection.go Watch, WatchAll).
    int found = 0;
    for (auto it = target.cosi_log.rbegin(); it != target.cosi_log.rend() && found < tail; ++it) {
      if (!feed.Matches(it->resource)) continue;
      ++found;
      feed.cursor = it->seq;
    }
    feed.AppendLogLocked(target.cosi_log, out);
  } else if (request.has_id()) {
    auto it = target.resources.find(
        fmt::format("{}/{}/{}", request.namespace_(), request.type(), request.id()));
    if (it != target.resources.end()) {
      ToProto(it->second, feed.AddEvent(out, cr::CREATED)->mutable_resource());
    } else {
      feed.Tombstone(feed.AddEvent(out, cr::DESTROYED), request.id());
    }
  } else if (request.options().bootstrap_contents()) {
    for (const auto& [key, res] : target.resources) {
      if (feed.Matches(res)) ToProto(res, feed.AddEvent(out, cr::CREATED)->mutable_resource());
    }
    // The end of the list: a tombstone of the kind (id ""), for api_version 1 clients only.
    if (request.api_version() >= 1) feed.Tombstone(feed.AddEvent(out, cr::BOOTSTRAPPED), "");
  }
  return out;
}

}  // namespace

CosiStateImpl::CosiStateImpl(ApidRouter router, std::shared_ptr<StreamPump> pump)
    : router_(std::move(router)),
      pump_(pump ? std::move(pump) : std::make_shared<StreamPump>(*router_.cluster())) {}

grpc::ServerWriteReactor<cr::WatchResponse>* CosiStateImpl::Watch(grpc::CallbackServerContext* ctx,
                                                                  const cr::WatchRequest* request) {
  auto route = router_.Resolve(*ctx, kWatchMethod);
  if (!route.ok()) return new RefusedStream<cr::WatchResponse>(ToGrpc(route.status()));
  grpc::Status refused = CheckAccess(*route, request->namespace_(), request->type());
  if (refused.ok()) refused = CheckWatchOptions(*request);
  if (!refused.ok()) {
    JournalCall(*route, kWatchMethod, refused);
    return new RefusedStream<cr::WatchResponse>(refused);
  }
  auto feed = std::make_shared<WatchFeed>(*request, *route);
  return WatchFeed::Open(feed, *pump_, kWatchMethod,
                         [&] { return StartFeedLocked(*feed, *request); });
}

}  // namespace tr::sim
