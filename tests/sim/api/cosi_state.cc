// cosi.resource.State (Get, List, Watch) of a simulated node (facts §5). Unknown types and
// namespaces are refused; sensitive resources (MachineConfig) need os:admin. Watch first sends an
// empty response (the watch is established), then the initial state (one resource: its current
// state, or a DESTROYED tombstone; a kind with bootstrap_contents: every resource by id, then
// BOOTSTRAPPED carrying a tombstone of the kind), or with tail_events the last changes instead,
// then changes until the node or the endpoint forwarding the stream goes down (UNAVAILABLE).
// One event per response, or batches with `aggregated`.
//
// Watch runs on gRPC's callback API, so an open watch holds no thread: its WatchFeed keeps what
// it still has to send and its place in the node's change log, and the node server's WatchPump,
// one thread woken by the cluster's notifications (never by a timer), hands each feed what
// changed. A watch's caller cancelling reaches it through OnCancel.
#include <algorithm>
#include <deque>
#include <thread>

#include "fmt/format.h"
#include "tests/sim/api/cosi_types.h"
#include "tests/sim/api/node_services.h"

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
}  // namespace

// One open watch: what it asks for, its place in the node's change log (both read and moved
// under the cluster lock), and what it still has to write (under its own lock).
class WatchFeed {
 public:
  WatchFeed(const cr::WatchRequest& request, Route resolved)
      : route(std::move(resolved)),
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
  void AppendLocked(const std::deque<CosiChange>& log, std::vector<cr::WatchResponse>& out);
  // With the cluster lock held: the responses for the changes since the last call, and the end
  // when the node or the endpoint went down (after the changes made before it went down) or the
  // fleet stops. False when there is nothing new.
  bool CollectLocked(const SimCluster& cluster, std::vector<cr::WatchResponse>& out,
                     std::optional<grpc::Status>& end);
  // Queues responses and the end, then writes (without the cluster lock: a write's completion
  // may run at once).
  void Push(std::vector<cr::WatchResponse> items, std::optional<grpc::Status> end);
  // Only queues (with the cluster lock held).
  void Enqueue(std::vector<cr::WatchResponse> items) {
    std::lock_guard lock(mu_);
    for (auto& item : items) queue_.push_back(std::move(item));
  }
  void WriteDone(bool ok);
  void Cancel();
  grpc::Status final_status() {
    std::lock_guard lock(mu_);
    return final_;
  }

  const Route route;
  grpc::ServerWriteReactor<cr::WatchResponse>* reactor = nullptr;  // set before any write
  // Under the cluster lock.
  uint64_t cursor = 0;
  uint64_t generation = 0;
  uint64_t endpoint_generation = 0;
  bool collecting = true;

 private:
  enum class Step { kNone, kWrite, kFinish };
  // Under mu_: what to do next; at most one write in flight, Finish once and after it.
  Step NextLocked();
  void Perform(Step step, const grpc::Status& status);

  const std::string ns_;
  const std::string type_;
  const std::optional<std::string> id_;
  const bool aggregated_;
  std::mutex mu_;
  std::deque<cr::WatchResponse> queue_;
  cr::WatchResponse current_;  // the write in flight
  std::optional<grpc::Status> end_;
  grpc::Status final_;
  bool writing_ = false;
  bool finished_ = false;
  bool cancelled_ = false;
};

void WatchFeed::AppendLocked(const std::deque<CosiChange>& log,
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

bool WatchFeed::CollectLocked(const SimCluster& cluster, std::vector<cr::WatchResponse>& out,
                              std::optional<grpc::Status>& end) {
  if (!collecting) return false;
  const SimNode& target = *route.target;
  if (cluster.stopping()) {
    end = grpc::Status::CANCELLED;
    collecting = false;
    return true;
  }
  const bool went_down = target.generation != generation;
  const bool gone = went_down || route.endpoint->generation != endpoint_generation ||
                    !target.api_reachable() || !route.endpoint->api_reachable();
  static const std::deque<CosiChange> kNone;
  const std::deque<CosiChange>* log = &target.cosi_log;
  if (went_down) {
    log = target.last_life_generation == generation ? &target.last_life_cosi_log : &kNone;
  }
  AppendLocked(*log, out);
  if (gone) {
    end = grpc::Status(grpc::StatusCode::UNAVAILABLE, "error reading from server: EOF");
    collecting = false;
  }
  return !out.empty() || end.has_value();
}

WatchFeed::Step WatchFeed::NextLocked() {
  if (finished_ || writing_) return Step::kNone;
  if (cancelled_) {
    finished_ = true;
    final_ = grpc::Status::CANCELLED;
    return Step::kFinish;
  }
  if (!queue_.empty()) {
    current_ = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    return Step::kWrite;
  }
  if (end_) {
    finished_ = true;
    final_ = *end_;
    return Step::kFinish;
  }
  return Step::kNone;
}

// Outside mu_: a write's completion may run at once on this thread and take it.
void WatchFeed::Perform(Step step, const grpc::Status& status) {
  if (step == Step::kWrite) reactor->StartWrite(&current_);
  if (step == Step::kFinish) reactor->Finish(status);
}

void WatchFeed::Push(std::vector<cr::WatchResponse> items, std::optional<grpc::Status> end) {
  Step step;
  grpc::Status status;
  {
    std::lock_guard lock(mu_);
    for (auto& item : items) queue_.push_back(std::move(item));
    if (end && !end_) end_ = std::move(end);
    step = NextLocked();
    status = final_;
  }
  Perform(step, status);
}

void WatchFeed::WriteDone(bool ok) {
  Step step;
  grpc::Status status;
  {
    std::lock_guard lock(mu_);
    writing_ = false;
    cancelled_ = cancelled_ || !ok;
    step = NextLocked();
    status = final_;
  }
  Perform(step, status);
}

void WatchFeed::Cancel() {
  Step step;
  grpc::Status status;
  {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    step = NextLocked();
    status = final_;
  }
  Perform(step, status);
}

namespace {

// The stream gRPC drives; it journals the call and lets the pump forget the feed at the end.
class WatchStream final : public grpc::ServerWriteReactor<cr::WatchResponse> {
 public:
  WatchStream(std::shared_ptr<WatchFeed> feed, WatchPump& pump)
      : feed_(std::move(feed)), pump_(pump) {}
  void OnWriteDone(bool ok) override {
    auto feed = feed_;  // the end may run at once and delete this stream
    feed->WriteDone(ok);
  }
  void OnCancel() override {
    auto feed = feed_;
    feed->Cancel();
  }
  void OnDone() override;

 private:
  std::shared_ptr<WatchFeed> feed_;
  WatchPump& pump_;
};

// A watch refused before it starts.
class RefusedWatch final : public grpc::ServerWriteReactor<cr::WatchResponse> {
 public:
  explicit RefusedWatch(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace

// One thread per node server, started by its first watch: at each notification of the cluster
// it collects every feed's news under the cluster lock, then pushes them without it.
class WatchPump {
 public:
  explicit WatchPump(SimCluster& cluster) : cluster_(cluster) {}
  ~WatchPump() {
    {
      std::lock_guard lock(cluster_.mu());
      stop_ = true;
    }
    cluster_.cv().notify_all();
    if (thread_.joinable()) thread_.join();
  }
  // With the cluster lock held, so that no change made after the feed's start is missed.
  void AddLocked(std::shared_ptr<WatchFeed> feed) {
    {
      std::lock_guard lock(mu_);
      feeds_.push_back(std::move(feed));
    }
    if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  }
  void Remove(const WatchFeed* feed) {
    std::lock_guard lock(mu_);
    std::erase_if(feeds_, [feed](const auto& f) { return f.get() == feed; });
  }

 private:
  struct News {
    std::shared_ptr<WatchFeed> feed;
    std::vector<cr::WatchResponse> items;
    std::optional<grpc::Status> end;
  };
  void Run() {
    std::unique_lock lock(cluster_.mu());
    while (!stop_) {
      std::vector<News> news;
      {
        std::lock_guard feeds(mu_);
        for (const auto& feed : feeds_) {
          News n{feed, {}, std::nullopt};
          if (feed->CollectLocked(cluster_, n.items, n.end)) news.push_back(std::move(n));
        }
      }
      if (news.empty()) {
        cluster_.cv().wait(lock);
        continue;
      }
      lock.unlock();
      for (auto& n : news) n.feed->Push(std::move(n.items), std::move(n.end));
      news.clear();
      lock.lock();
    }
  }

  SimCluster& cluster_;
  std::mutex mu_;  // feeds_; taken after the cluster lock when both are
  std::vector<std::shared_ptr<WatchFeed>> feeds_;
  bool stop_ = false;  // under the cluster lock
  std::thread thread_;
};

namespace {

void WatchStream::OnDone() {
  pump_.Remove(feed_.get());
  JournalCall(feed_->route, kWatchMethod, feed_->final_status());
  delete this;
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
  feed.generation = target.generation;
  feed.endpoint_generation = feed.route.endpoint->generation;
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
    feed.AppendLocked(target.cosi_log, out);
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

CosiStateImpl::CosiStateImpl(ApidRouter router)
    : router_(std::move(router)), pump_(std::make_unique<WatchPump>(*router_.cluster())) {}

CosiStateImpl::~CosiStateImpl() = default;

grpc::ServerWriteReactor<cr::WatchResponse>* CosiStateImpl::Watch(grpc::CallbackServerContext* ctx,
                                                                  const cr::WatchRequest* request) {
  auto route = router_.Resolve(*ctx, kWatchMethod);
  if (!route.ok()) return new RefusedWatch(ToGrpc(route.status()));
  grpc::Status refused = CheckAccess(*route, request->namespace_(), request->type());
  if (refused.ok()) refused = CheckWatchOptions(*request);
  if (!refused.ok()) {
    JournalCall(*route, kWatchMethod, refused);
    return new RefusedWatch(refused);
  }
  auto feed = std::make_shared<WatchFeed>(*request, *route);
  auto* stream = new WatchStream(feed, *pump_);
  feed->reactor = stream;
  {
    std::lock_guard lock(route->cluster->mu());
    // Queued before the pump knows the feed, so its first responses go out first.
    feed->Enqueue(StartFeedLocked(*feed, *request));
    pump_->AddLocked(feed);
  }
  feed->Push({}, std::nullopt);  // starts the first write
  return stream;
}

}  // namespace tr::sim
