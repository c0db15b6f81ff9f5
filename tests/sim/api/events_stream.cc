// MachineService/Events of a simulated node (facts §3.7): the empty hello event, then buffered
// events per tail_events / tail_id / tail_seconds, then new ones as they happen, filtered by
// with_actor_id. The stream ends with UNAVAILABLE when the node (or the apid endpoint that
// forwards it) goes down, as a real node's connection drops on reboot.
//
// Events runs on gRPC's callback API, so an open stream holds no thread: its EventsFeed keeps its
// place in the node's events, and its cluster's StreamPump hands it what was published
// (stream_pump.h), as a real node's stream costs nothing between events.
#include <algorithm>
#include <deque>

#include "tests/sim/common/ids.h"
#include "tests/sim/api/node_services.h"
#include "tests/sim/api/stream_pump.h"

namespace tr::sim {
namespace {

constexpr char kEventsMethod[] = "/machine.MachineService/Events";

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

// One open stream: its filter and its place in the node's events.
class EventsFeed final : public StreamFeed<machine::Event> {
 public:
  EventsFeed(const machine::EventsRequest& request, Route resolved)
      : StreamFeed(std::move(resolved)), actor_id_(request.with_actor_id()) {}

  // With the cluster lock held: the hello event, then the buffered events the request asks for.
  std::vector<machine::Event> StartLocked(const machine::EventsRequest& request) {
    const WallTime now = route.cluster->scheduler().WallNow();
    // The hello event is a real event without payload: it has an id (runtime.NewEvent).
    std::vector<machine::Event> out(1);
    out[0].mutable_data();
    out[0].set_id(NewXid(now));
    out[0].set_actor_id(actor_id_);
    cursor_ = StartCursor(*route.target, request, now);
    AppendLocked(*route.target, NodeLife::kSame, out);
    return out;
  }

 private:
  void AppendLocked(const SimNode& target, NodeLife life,
                    std::vector<machine::Event>& out) override {
    if (life == NodeLife::kGone) return;
    const auto& events = life == NodeLife::kSame ? target.events : target.last_life_events;
    for (auto it = FirstFrom(events, cursor_); it != events.end(); ++it) {
      cursor_ = it->seq + 1;
      if (actor_id_.empty() || it->actor_id == actor_id_) out.push_back(ToProto(*it));
    }
  }

  const std::string actor_id_;
  uint64_t cursor_ = 0;  // under the cluster lock
};

}  // namespace

MachineServiceImpl::MachineServiceImpl(ApidRouter router, std::shared_ptr<StreamPump> pump)
    : router_(std::move(router)),
      pump_(pump ? std::move(pump) : std::make_shared<StreamPump>(*router_.cluster())) {}

grpc::ServerWriteReactor<machine::Event>* MachineServiceImpl::Events(
    grpc::CallbackServerContext* ctx, const machine::EventsRequest* request) {
  auto route = router_.Resolve(*ctx, kEventsMethod);
  if (!route.ok()) return new RefusedStream<machine::Event>(ToGrpc(route.status()));
  auto feed = std::make_shared<EventsFeed>(*request, *route);
  return EventsFeed::Open(feed, *pump_, kEventsMethod, [&] { return feed->StartLocked(*request); });
}

}  // namespace tr::sim
