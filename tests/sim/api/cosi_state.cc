// cosi.resource.State (Get, List, Watch) of a simulated node (facts §5). Unknown types and
// namespaces are refused; sensitive resources (MachineConfig) need os:admin. Watch first sends an
// empty response (the watch is established), then the initial state (one resource: its current
// state; a kind with bootstrap_contents: every resource then BOOTSTRAPPED), then changes until the
// node goes down.
#include "fmt/format.h"
#include "tests/sim/api/cosi_types.h"
#include "tests/sim/api/node_services.h"

namespace tr::sim {
namespace {

constexpr auto kWatchPoll = std::chrono::milliseconds(50);
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
    // cosi-project/runtime server.go: a single-resource watch has no bootstrap contents, and
    // clients before api_version 1 never get BOOTSTRAPPED markers.
    if (single && request->options().bootstrap_contents()) {
      return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                          "bootstrap contents is not implemented for resource watch");
    }
    auto matches = [&](const CosiResource& res) {
      return res.ns == ns && res.type == type && (!single || res.id == request->id());
    };
    std::vector<cr::WatchResponse> initial(1);  // the empty "watch established" response
    std::unique_lock lock(r.cluster->mu());
    const uint64_t generation = r.target->generation;
    uint64_t cursor = r.target->next_cosi_seq;
    if (single) {
      auto* ev = initial.emplace_back().add_event();
      auto it = r.target->resources.find(fmt::format("{}/{}/{}", ns, type, request->id()));
      if (it != r.target->resources.end()) {
        ev->set_event_type(cr::CREATED);
        ToProto(it->second, ev->mutable_resource());
      } else {
        ev->set_event_type(cr::DESTROYED);
        auto* m = ev->mutable_resource()->mutable_metadata();
        m->set_namespace_(ns);
        m->set_type(type);
        m->set_id(request->id());
      }
    } else if (request->options().bootstrap_contents()) {
      for (const auto& [key, res] : r.target->resources) {
        if (!matches(res)) continue;
        auto* ev = initial.emplace_back().add_event();
        ev->set_event_type(cr::CREATED);
        ToProto(res, ev->mutable_resource());
      }
      if (request->api_version() >= 1) {
        initial.emplace_back().add_event()->set_event_type(cr::BOOTSTRAPPED);
      }
    }
    while (true) {
      lock.unlock();
      for (const auto& resp : initial) {
        if (!writer->Write(resp)) return grpc::Status::CANCELLED;
      }
      initial.clear();
      lock.lock();
      while (initial.empty()) {
        if (CallAbandoned(ctx, *r.cluster)) return grpc::Status::CANCELLED;
        const bool went_down = r.target->generation != generation;
        const bool gone = went_down || !r.target->api_reachable();
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
          auto* ev = initial.emplace_back().add_event();
          ev->set_event_type(static_cast<cr::EventType>(change.type));
          ToProto(change.resource, ev->mutable_resource());
          if (change.old) ToProto(*change.old, ev->mutable_old());
        }
        if (gone) {
          lock.unlock();
          for (const auto& resp : initial) {
            if (!writer->Write(resp)) return grpc::Status::CANCELLED;
          }
          return grpc::Status(grpc::StatusCode::UNAVAILABLE, "error reading from server: EOF");
        }
        if (initial.empty()) r.cluster->cv().wait_for(lock, kWatchPoll);
      }
    }
  });
}

}  // namespace tr::sim
