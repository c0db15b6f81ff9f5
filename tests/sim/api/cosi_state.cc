// cosi.resource.State (Get, List, Watch) of a simulated node (facts §5). Unknown types and
// namespaces are refused; sensitive resources (MachineConfig) need os:admin. Watch first sends an
// empty response (the watch is established), then the initial state (one resource: its current
// state, or a DESTROYED tombstone; a kind with bootstrap_contents: every resource by id, then
// BOOTSTRAPPED carrying a tombstone of the kind), or with tail_events the last changes instead,
// then changes until the node or the endpoint forwarding the stream goes down (UNAVAILABLE).
// One event per response, or batches with `aggregated`.
#include <algorithm>

#include "fmt/format.h"
#include "tests/sim/api/cosi_types.h"
#include "tests/sim/api/node_services.h"

namespace tr::sim {
namespace {

// A watch waits for its cluster's notification (a change, a node going down, the fleet
// stopping); the timeout only bounds how late it notices that its caller cancelled, and so how
// long a cancelled watch's thread lingers. Each wake costs the simulator: with 250 ms (as
// events_stream.cc), 1,200 idle watches took a third of a core (docs/benchmarks.md, "Watches:
// what they cost"), and the observer may hold ten of them per cluster.
constexpr auto kWatchPoll = std::chrono::seconds(1);
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

grpc::Status CosiStateImpl::Watch(grpc::ServerContext* ctx, const cr::WatchRequest* request,
                                  grpc::ServerWriter<cr::WatchResponse>* writer) {
  return HandleCall(router_, ctx, "/cosi.resource.State/Watch", [&](const Route& r) {
    if (auto st = CheckAccess(r, request->namespace_(), request->type()); !st.ok()) return st;
    const std::string& ns = request->namespace_();
    const std::string& type = request->type();
    const bool single = request->has_id();
    const auto& options = request->options();
    const int tail = std::max(0, options.tail_events());
    // cosi-project/runtime server.go: a single-resource watch has no bootstrap contents;
    // inmem/collection.go: a kind watch cannot have both bootstrap contents and tail events
    // (a plain error: Unknown on the wire).
    if (single && options.bootstrap_contents()) {
      return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                          "bootstrap contents is not implemented for resource watch");
    }
    if (!single && options.bootstrap_contents() && tail > 0) {
      return grpc::Status(grpc::StatusCode::UNKNOWN,
                          "cannot use BootstrapContents with TailEvents and StartFromBookmark "
                          "options");
    }
    auto matches = [&](const CosiResource& res) {
      return res.ns == ns && res.type == type && (!single || res.id == request->id());
    };
    // Without `aggregated` every event is a response of its own; with it, the bootstrapped
    // list (and its marker) is one response and each batch of changes another.
    const bool aggregated = !single && options.aggregated();
    std::vector<cr::WatchResponse> pending(1);  // the empty "watch established" response
    auto add_event = [&](cr::EventType event_type) {
      if (!aggregated || pending.empty() || pending.back().event_size() == 0) {
        pending.emplace_back();
      }
      auto* ev = pending.back().add_event();
      ev->set_event_type(event_type);
      return ev;
    };
    auto tombstone = [&](cr::Event* ev, const std::string& id) {
      auto* m = ev->mutable_resource()->mutable_metadata();
      m->set_namespace_(ns);
      m->set_type(type);
      m->set_id(id);
      m->set_version("undefined");
      m->set_phase("running");
    };
    std::unique_lock lock(r.cluster->mu());
    const uint64_t generation = r.target->generation;
    const uint64_t endpoint_generation = r.endpoint->generation;
    uint64_t cursor = r.target->next_cosi_seq;
    if (tail > 0) {
      // The last `tail` changes of the kind (of the one resource for a single watch), replayed
      // instead of the initial state (inmem/collection.go Watch, WatchAll).
      int found = 0;
      const auto& log = r.target->cosi_log;
      for (auto it = log.rbegin(); it != log.rend() && found < tail; ++it) {
        if (!matches(it->resource)) continue;
        ++found;
        cursor = it->seq;
      }
    } else if (single) {
      auto it = r.target->resources.find(fmt::format("{}/{}/{}", ns, type, request->id()));
      if (it != r.target->resources.end()) {
        ToProto(it->second, add_event(cr::CREATED)->mutable_resource());
      } else {
        tombstone(add_event(cr::DESTROYED), request->id());
      }
    } else if (options.bootstrap_contents()) {
      for (const auto& [key, res] : r.target->resources) {
        if (matches(res)) ToProto(res, add_event(cr::CREATED)->mutable_resource());
      }
      // The end of the list: a tombstone of the kind (id ""), for api_version 1 clients only.
      if (request->api_version() >= 1) tombstone(add_event(cr::BOOTSTRAPPED), "");
    }
    while (true) {
      lock.unlock();
      for (const auto& resp : pending) {
        if (!writer->Write(resp)) return grpc::Status::CANCELLED;
      }
      pending.clear();
      lock.lock();
      while (pending.empty()) {
        if (CallAbandoned(ctx, *r.cluster)) return grpc::Status::CANCELLED;
        const bool went_down = r.target->generation != generation;
        // The node, or the apid endpoint forwarding the stream, going down ends it.
        const bool gone = went_down || r.endpoint->generation != endpoint_generation ||
                          !r.target->api_reachable() || !r.endpoint->api_reachable();
        // Changes made before the node went down are still delivered, then the stream ends.
        static const std::deque<CosiChange> kNone;
        const std::deque<CosiChange>* log = &r.target->cosi_log;
        if (went_down) {
          log =
              r.target->last_life_generation == generation ? &r.target->last_life_cosi_log : &kNone;
        }
        for (const auto& change : *log) {
          if (change.seq < cursor) continue;
          cursor = change.seq + 1;
          if (!matches(change.resource)) continue;
          auto* ev = add_event(static_cast<cr::EventType>(change.type));
          ToProto(change.resource, ev->mutable_resource());
          if (change.old) ToProto(*change.old, ev->mutable_old());
        }
        if (gone) {
          lock.unlock();
          for (const auto& resp : pending) {
            if (!writer->Write(resp)) return grpc::Status::CANCELLED;
          }
          return grpc::Status(grpc::StatusCode::UNAVAILABLE, "error reading from server: EOF");
        }
        if (pending.empty()) r.cluster->cv().wait_for(lock, kWatchPoll);
      }
    }
  });
}

}  // namespace tr::sim
