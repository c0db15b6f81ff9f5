// What talos-sim's streams on gRPC's callback API share (COSI Watch in cosi_state.cc,
// MachineService/Events in events_stream.cc): an open stream holds no thread. Its StreamFeed
// keeps its place in the node's log and what it still has to write; one StreamPump thread per
// cluster, shared by its node servers (started by the first stream, woken only by the cluster's
// notifications, never by a timer), collects every feed's news under the cluster lock and hands
// them on without it. A caller's cancel reaches the stream through OnCancel.
//
// Thread-safety: a feed's place in the log is read and moved under the cluster lock; its queue
// of writes has a lock of its own; the pump's list of feeds too.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "grpcpp/support/server_callback.h"
#include "tests/sim/api/apid_router.h"

namespace tr::sim {

// One open stream as the pump sees it.
class PumpedFeed {
 public:
  virtual ~PumpedFeed() = default;
  // On the pump's thread with the cluster lock held: takes in what changed since the last call.
  // False when there is nothing to hand on.
  virtual bool CollectLocked(const SimCluster& cluster) = 0;
  // On the pump's thread without the cluster lock (a write's completion may run at once):
  // hands on what CollectLocked took in.
  virtual void Deliver() = 0;
};

class StreamPump {
 public:
  explicit StreamPump(SimCluster& cluster) : cluster_(cluster) {}
  // Stops the thread; the servers have ended every stream before (Server::Wait).
  ~StreamPump();
  StreamPump(const StreamPump&) = delete;
  StreamPump& operator=(const StreamPump&) = delete;

  // With the cluster lock held, so that no change made after the feed's start is missed.
  void AddLocked(std::shared_ptr<PumpedFeed> feed);
  void Remove(const PumpedFeed* feed);

 private:
  void Run();

  SimCluster& cluster_;
  absl::Mutex mu_;  // taken after the cluster lock when both are
  std::vector<std::shared_ptr<PumpedFeed>> feeds_ ABSL_GUARDED_BY(mu_);
  bool stop_ = false;  // under the cluster lock
  std::thread thread_ ABSL_GUARDED_BY(mu_);
};

// What one stream still has to write, and its end: at most one write in flight, Finish once and
// after the writes queued before the end; a cancel (or a failed write) finishes it at once.
template <typename Response>
class StreamQueue {
 public:
  explicit StreamQueue(grpc::ServerWriteReactor<Response>& reactor) : reactor_(reactor) {}

  // Only queues (a feed's first responses, with the cluster lock held).
  void Enqueue(std::vector<Response> items) {
    absl::MutexLock lock(&mu_);
    for (auto& item : items) queue_.push_back(std::move(item));
  }
  // Queues responses and the end, then writes. Without the cluster lock.
  void Push(std::vector<Response> items, std::optional<grpc::Status> end) {
    Step step;
    {
      absl::MutexLock lock(&mu_);
      for (auto& item : items) queue_.push_back(std::move(item));
      if (end && !end_) end_ = std::move(end);
      step = NextLocked();
    }
    Perform(step);
  }
  void WriteDone(bool ok) {
    Step step;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      cancelled_ = cancelled_ || !ok;
      step = NextLocked();
    }
    Perform(step);
  }
  void Cancel() {
    Step step;
    {
      absl::MutexLock lock(&mu_);
      cancelled_ = true;
      step = NextLocked();
    }
    Perform(step);
  }
  grpc::Status final_status() {
    absl::MutexLock lock(&mu_);
    return final_;
  }

 private:
  enum class Kind { kNone, kWrite, kFinish };
  struct Step {
    Kind kind = Kind::kNone;
    grpc::Status status;
  };
  Step NextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || writing_) return {};
    if (cancelled_) return FinishLocked(grpc::Status::CANCELLED);
    if (!queue_.empty()) {
      current_ = std::move(queue_.front());
      queue_.pop_front();
      writing_ = true;
      return {Kind::kWrite, {}};
    }
    if (end_) return FinishLocked(*end_);
    return {};
  }
  Step FinishLocked(const grpc::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    finished_ = true;
    final_ = status;
    return {Kind::kFinish, status};
  }
  // Outside mu_: a write's completion may run at once on this thread and take it.
  void Perform(const Step& step) {
    if (step.kind == Kind::kWrite) reactor_.StartWrite(&current_);
    if (step.kind == Kind::kFinish) reactor_.Finish(step.status);
  }

  grpc::ServerWriteReactor<Response>& reactor_;
  absl::Mutex mu_;
  std::deque<Response> queue_ ABSL_GUARDED_BY(mu_);
  // The write in flight: set under mu_ before it starts, read by gRPC until its completion.
  Response current_;
  std::optional<grpc::Status> end_ ABSL_GUARDED_BY(mu_);
  grpc::Status final_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

// Where a stream's node stands against the life it started in.
enum class NodeLife {
  kSame,  // the node is still in the life the stream started in
  kLast,  // it went down once since: its last life's log is kept
  kGone,  // that life's log is gone too (a later reboot)
};

// One open stream of a node: the route, the generations it started at, the queue of its writes
// and the reactor gRPC drives (it journals the call at its end and lets the pump forget the
// feed). A stream is made with Open and is owned by gRPC until its OnDone.
template <typename Response>
class StreamFeed : public PumpedFeed {
 public:
  explicit StreamFeed(Route resolved) : route(std::move(resolved)) {}

  // Starts `feed`: its first responses, `start_locked()` (called with the cluster lock held
  // after the feed took the node's generations), are queued, then the pump takes it and the
  // first write starts. Returns the reactor for gRPC.
  template <typename StartLocked>
  static grpc::ServerWriteReactor<Response>* Open(std::shared_ptr<StreamFeed> feed,
                                                  StreamPump& pump, const char* method,
                                                  StartLocked&& start_locked) {
    auto* stream = new Stream(feed, pump, method);
    feed->queue_.emplace(*stream);
    {
      std::lock_guard lock(feed->route.cluster->mu());
      feed->generation_ = feed->route.target->generation;
      feed->endpoint_generation_ = feed->route.endpoint->generation;
      // Queued before the pump knows the feed, so its first responses go out first.
      feed->queue_->Enqueue(start_locked());
      pump.AddLocked(feed);
    }
    feed->queue_->Push({}, std::nullopt);
    return stream;
  }

  bool CollectLocked(const SimCluster& cluster) final {
    if (!collecting_) return false;
    const SimNode& target = *route.target;
    if (cluster.stopping()) {
      staged_end_ = grpc::Status::CANCELLED;
      collecting_ = false;
      return true;
    }
    const bool went_down = target.generation != generation_;
    const bool gone = went_down || route.endpoint->generation != endpoint_generation_ ||
                      !target.api_reachable() || !route.endpoint->api_reachable();
    NodeLife life = NodeLife::kSame;
    if (went_down) {
      life = target.last_life_generation == generation_ ? NodeLife::kLast : NodeLife::kGone;
    }
    // What was published up to the moment the node went down still reaches the client; after a
    // later reboot it is gone, like the connection that would have carried it.
    AppendLocked(target, life, staged_);
    if (gone) {
      staged_end_ = grpc::Status(grpc::StatusCode::UNAVAILABLE, "error reading from server: EOF");
      collecting_ = false;
    }
    return !staged_.empty() || staged_end_.has_value();
  }
  void Deliver() final {
    queue_->Push(std::exchange(staged_, {}), std::exchange(staged_end_, std::nullopt));
  }

  const Route route;

 protected:
  // With the cluster lock held: the responses for the node's log entries from the feed's place
  // on (none when `life` is kGone), appended to `out`.
  virtual void AppendLocked(const SimNode& target, NodeLife life, std::vector<Response>& out) = 0;

 private:
  class Stream final : public grpc::ServerWriteReactor<Response> {
   public:
    Stream(std::shared_ptr<StreamFeed> feed, StreamPump& pump, const char* method)
        : feed_(std::move(feed)), pump_(pump), method_(method) {}
    void OnWriteDone(bool ok) override {
      auto feed = feed_;  // the end may run at once and delete this stream
      feed->queue_->WriteDone(ok);
    }
    void OnCancel() override {
      auto feed = feed_;
      feed->queue_->Cancel();
    }
    void OnDone() override {
      pump_.Remove(feed_.get());
      JournalCall(feed_->route, method_, feed_->queue_->final_status());
      delete this;
    }

   private:
    std::shared_ptr<StreamFeed> feed_;
    StreamPump& pump_;
    const char* method_;
  };

  std::optional<StreamQueue<Response>> queue_;  // set by Open, before any write
  // Under the cluster lock.
  uint64_t generation_ = 0;
  uint64_t endpoint_generation_ = 0;
  bool collecting_ = true;
  // On the pump's thread: what CollectLocked took in for Deliver.
  std::vector<Response> staged_;
  std::optional<grpc::Status> staged_end_;
};

// A stream refused before it starts (the refusal is journaled by whoever refused it).
template <typename Response>
class RefusedStream final : public grpc::ServerWriteReactor<Response> {
 public:
  explicit RefusedStream(const grpc::Status& status) { this->Finish(status); }
  void OnDone() override { delete this; }
};

}  // namespace tr::sim
