// MachineService/Events of a simulated node (facts §3.7): the empty hello event, then buffered
// events per tail_events / tail_id / tail_seconds, then new ones as they happen, filtered by
// with_actor_id. The stream ends with UNAVAILABLE when the node (or the apid endpoint that
// forwards it) goes down, as a real node's connection drops on reboot.
#include <algorithm>
#include <deque>

#include "tests/sim/common/ids.h"
#include "tests/sim/api/node_services.h"

namespace tr::sim {
namespace {

// A stream waits for its cluster's notification (every state change, a node going down, the
// fleet stopping); the timeout only bounds how late it notices that its caller cancelled.
// A real node's stream costs nothing between events: each wake here costs the simulator, and
// a fleet's worth of open streams woken every 50 ms saturated it.
constexpr auto kEventsPoll = std::chrono::milliseconds(250);

// The events of `events` from sequence number `cursor` on (they are in sequence order).
std::deque<NodeEvent>::const_iterator FirstFrom(const std::deque<NodeEvent>& events,
                                                uint64_t cursor) {
  return std::partition_point(events.begin(), events.end(),
                              [cursor](const NodeEvent& ev) { return ev.seq < cursor; });
}

// First buffered sequence number to send, per the request.
uint64_t StartCursor(const SimNode& node, const machine::EventsRequest& request, WallTime now) {
  const uint64_t next = node.next_event_seq;
  const uint64_t first = node.events.empty() ? next : node.events.front().seq;
  if (!request.tail_id().empty()) {
    for (const auto& ev : node.events) {
      if (ev.id == request.tail_id()) return ev.seq + 1;
    }
    return first;
  }
  if (request.tail_seconds() > 0) {
    for (const auto& ev : node.events) {
      if (ev.time >= now - std::chrono::seconds(request.tail_seconds())) return ev.seq;
    }
    return next;
  }
  if (request.tail_events() < 0) return first;
  if (request.tail_events() > 0) {
    const uint64_t n = static_cast<uint64_t>(request.tail_events());
    return next - std::min<uint64_t>(n, next - first);
  }
  return next;
}

machine::Event ToProto(const NodeEvent& ev) {
  machine::Event out;
  out.mutable_data()->set_type_url(ev.type_url);
  out.mutable_data()->set_value(ev.value);
  out.set_id(ev.id);
  out.set_actor_id(ev.actor_id);
  return out;
}

}  // namespace

grpc::Status MachineServiceImpl::Events(grpc::ServerContext* ctx,
                                        const machine::EventsRequest* request,
                                        grpc::ServerWriter<machine::Event>* writer) {
  return HandleCall(router_, ctx, "/machine.MachineService/Events", [&](const Route& r) {
    SimCluster& cluster = *r.cluster;
    std::unique_lock lock(cluster.mu());
    const uint64_t generation = r.target->generation;
    const uint64_t endpoint_generation = r.endpoint->generation;
    uint64_t cursor = StartCursor(*r.target, *request, cluster.scheduler().WallNow());
    lock.unlock();
    // The hello event is a real event without payload: it has an id (runtime.NewEvent).
    machine::Event hello;
    hello.mutable_data();
    hello.set_id(NewXid(cluster.scheduler().WallNow()));
    hello.set_actor_id(request->with_actor_id());
    if (!writer->Write(hello)) return grpc::Status::CANCELLED;
    lock.lock();
    while (true) {
      if (CallAbandoned(ctx, cluster)) return grpc::Status::CANCELLED;
      const bool target_went_down = r.target->generation != generation;
      const bool gone = target_went_down || r.endpoint->generation != endpoint_generation ||
                        !r.target->api_reachable() || !r.endpoint->api_reachable();
      // Events published up to the moment the node went down still reach the client; after a
      // later reboot they are gone, like the connection that would have carried them.
      static const std::deque<NodeEvent> kNone;
      const std::deque<NodeEvent>* source = &r.target->events;
      if (target_went_down) {
        source =
            r.target->last_life_generation == generation ? &r.target->last_life_events : &kNone;
      }
      std::vector<machine::Event> batch;
      for (auto it = FirstFrom(*source, cursor); it != source->end(); ++it) {
        const NodeEvent& ev = *it;
        cursor = ev.seq + 1;
        if (!request->with_actor_id().empty() && ev.actor_id != request->with_actor_id()) {
          continue;
        }
        batch.push_back(ToProto(ev));
      }
      if (batch.empty() && !gone) {
        cluster.cv().wait_for(lock, kEventsPoll);
        continue;
      }
      lock.unlock();
      for (const auto& ev : batch) {
        if (!writer->Write(ev)) return grpc::Status::CANCELLED;
      }
      if (gone) {
        return grpc::Status(grpc::StatusCode::UNAVAILABLE, "error reading from server: EOF");
      }
      lock.lock();
    }
  });
}

}  // namespace tr::sim
