// The started streams of GrpcTalosClient (see grpc_talos_client_impl.h): COSI watches and
// MachineService/Events. A stream is a chain of attempts, one per endpoint tried, each an
// asynchronous reader on the process's one stream queue: a completion queue drained by one
// thread that blocks without a timeout and hands each finished operation (the call started, a
// message read, the end) to its attempt. No thread waits for a stream, and none wakes while
// the streams are quiet: gRPC's callback API, used before, polls its completion queue on two
// threads of its own, a 1 s timeout and a 100 ms sleep each (docs/benchmarks.md).
//
// The callbacks run on that thread, one at a time: they must not block.
//
// Routing: as a read-only call until the stream is established (the node's first message: a
// watch's empty one, the hello of Events): an attempt that ends Unavailable before it moves on to
// the next endpoint. Once established, the stream ends with the call and the caller starts a new
// one.
#include <condition_variable>
#include <functional>
#include <optional>
#include <thread>

#include "base/mutex.h"
#include "base/thread_name.h"
#include "cosi/resource/state.grpc.pb.h"
#include "reconciler/clients/talos/grpc_talos_client_impl.h"
#include "reconciler/clients/talos/talos_answers.h"
#include "reconciler/clients/talos/talos_convert.h"

namespace tr::reconciler::talos {
namespace grpc_watch {

// An operation started on the stream queue; its tag. Completed runs on the queue's thread.
struct QueuedOperation {
  std::function<void(bool ok)> completed;
};

// The process's stream queue: started on first use, never stopped (it lives until the process
// ends, as the streams of a client that a static owns may).
class StreamQueue {
 public:
  static grpc::CompletionQueue* Get() {
    static StreamQueue* const queue = new StreamQueue;
    return &queue->cq_;
  }

 private:
  StreamQueue() : thread_([this] { Drain(); }) {}
  void Drain() {
    NameThisThread("talos-streams");
    void* tag = nullptr;
    bool ok = false;
    while (cq_.Next(&tag, &ok)) static_cast<QueuedOperation*>(tag)->completed(ok);
  }

  grpc::CompletionQueue cq_;
  std::jthread thread_;
};

// What a stream's handle, its attempts and the process's shutdown share.
template <typename Event>
class StreamShared {
 public:
  StreamShared(StreamCallbacks<Event> callbacks, std::vector<size_t> endpoints)
      : candidates(std::move(endpoints)), callbacks_(std::move(callbacks)) {}

  // Cancels the attempt in flight, and the stream before any later attempt starts.
  void Cancel() {
    MutexLock lock(mu_);
    cancelled_ = true;
    if (context_ != nullptr) context_->TryCancel();
  }
  // Registers the attempt about to start; false when the stream was cancelled first.
  bool Begin(grpc::ClientContext* context) {
    MutexLock lock(mu_);
    if (cancelled_) return false;
    context_ = context;
    return true;
  }
  // The attempt in flight has ended; true when the stream was cancelled.
  bool End() {
    MutexLock lock(mu_);
    context_ = nullptr;
    return cancelled_;
  }
  void Deliver(const Event& event) const {
    if (callbacks_.on_event) callbacks_.on_event(event);
  }
  // Reports the end, then releases whoever waits in WaitDone.
  void Finish(const absl::Status& status) {
    if (callbacks_.on_done) callbacks_.on_done(status);
    MutexLock lock(mu_);
    done_ = true;
    done_changed_.notify_all();
  }
  void WaitDone() {
    MutexLock lock(mu_);
    done_changed_.wait(lock, [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return done_; });
  }
  // Cancels the stream when the process shuts down.
  void CancelOn(const std::stop_token& shutdown) {
    on_shutdown_.emplace(shutdown, [this] { Cancel(); });
  }

  const std::vector<size_t> candidates;  // endpoint indices, in the order to try them

 private:
  StreamCallbacks<Event> callbacks_;
  Mutex mu_;
  std::condition_variable_any done_changed_;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<std::stop_callback<std::function<void()>>> on_shutdown_;
};

// The handle: cancels on destruction and waits for the end.
template <typename Event>
class StreamHandle final : public TalosStream {
 public:
  explicit StreamHandle(std::shared_ptr<StreamShared<Event>> shared) : shared_(std::move(shared)) {}
  ~StreamHandle() override {
    shared_->Cancel();
    shared_->WaitDone();
  }
  void Cancel() override { shared_->Cancel(); }

 private:
  std::shared_ptr<StreamShared<Event>> shared_;
};

// cosi.resource.State/Watch: a message carries events; an ERRORED one ends the watch.
struct CosiWatchStream {
  using Request = cosi::resource::WatchRequest;
  using Response = cosi::resource::WatchResponse;
  using Event = CosiEvent;
  static constexpr char kMethod[] = "cosi.State/Watch";
  // Through the node's own apid when it is an endpoint: a watch ends when its node goes down
  // anyway, and so no other control plane's reboot ends it (grpc_talos_client.h, Routing).
  static constexpr bool kNodeFirst = true;

  static std::unique_ptr<grpc::ClientAsyncReader<Response>> Prepare(
      const ChannelStubs& stubs, grpc::ClientContext* context, const Request& request,
      grpc::CompletionQueue* queue) {
    return stubs.cosi->PrepareAsyncWatch(context, request, queue);
  }
  // Delivers the message's events; not OK ends the stream with that status.
  static absl::Status Deliver(const Response& response, const CallInfo& info,
                              const StreamShared<Event>& shared) {
    for (const auto& message : response.event()) {
      if (message.event_type() == cosi::resource::ERRORED) {
        // The node's watch fell behind its history ("buffer overrun"); nothing more is sent.
        const std::string why = message.has_error() ? message.error() : "watch errored";
        return CallError(absl::StatusCode::kAborted, info, why);
      }
      if (std::optional<CosiEvent> event = ToCosiEvent(message)) shared.Deliver(*event);
    }
    return absl::OkStatus();
  }
};

// MachineService/Events: one event a message, the hello first.
struct MachineEventsStream {
  using Request = machine::EventsRequest;
  using Response = machine::Event;
  using Event = MachineEvent;
  static constexpr char kMethod[] = "Events";
  // Through another endpoint: it follows its node down and back (the follower's wake).
  static constexpr bool kNodeFirst = false;

  static std::unique_ptr<grpc::ClientAsyncReader<Response>> Prepare(
      const ChannelStubs& stubs, grpc::ClientContext* context, const Request& request,
      grpc::CompletionQueue* queue) {
    return stubs.machine->PrepareAsyncEvents(context, request, queue);
  }
  static absl::Status Deliver(const Response& response, const CallInfo& info,
                              const StreamShared<Event>& shared) {
    absl::StatusOr<MachineEvent> event = ToMachineEvent(response);
    if (!event.ok()) {
      return CallError(absl::StatusCode::kInternal, info, std::string(event.status().message()));
    }
    shared.Deliver(*event);
    return absl::OkStatus();
  }
};

}  // namespace grpc_watch

using grpc_watch::StreamHandle;
using grpc_watch::StreamQueue;
using grpc_watch::StreamShared;

// One attempt through one endpoint; deletes itself when the stream queue reports its end.
template <typename Kind>
class GrpcTalosClient::StreamAttempt final {
 public:
  using Shared = StreamShared<typename Kind::Event>;

  StreamAttempt(GrpcTalosClient& client, std::shared_ptr<Shared> shared,
                std::shared_ptr<const typename Kind::Request> request, std::string node,
                size_t position)
      : client_(client),
        shared_(std::move(shared)),
        request_(std::move(request)),
        position_(position),
        index_(shared_->candidates[position]),
        info_{Kind::kMethod, std::move(node), client_.endpoints_[index_].Target()} {}

  // Starts a stream of `Kind` to `node` and returns its handle.
  static std::unique_ptr<TalosStream> Launch(GrpcTalosClient& client, const std::string& node,
                                             std::shared_ptr<const typename Kind::Request> request,
                                             StreamCallbacks<typename Kind::Event> callbacks) {
    auto shared =
        std::make_shared<Shared>(std::move(callbacks), client.Candidates(node, Kind::kNodeFirst));
    shared->CancelOn(client.options_.shutdown);
    auto handle = std::make_unique<StreamHandle<typename Kind::Event>>(shared);
    (new StreamAttempt(client, std::move(shared), std::move(request), node, 0))->Start();
    return handle;
  }

  // Starts the call, or reports Cancelled when the stream was cancelled before.
  void Start() {
    context_.AddMetadata("node", info_.node);
    if (!shared_->Begin(&context_)) {
      shared_->Finish(CallError(absl::StatusCode::kCancelled, info_, "cancelled"));
      delete this;
      return;
    }
    reader_ = Kind::Prepare(client_.stubs_[index_], &context_, *request_, StreamQueue::Get());
    reader_->StartCall(&started_);
  }

 private:
  void OnStarted(bool ok) {
    if (!ok) {
      reader_->Finish(&status_, &finished_);
      return;
    }
    reader_->Read(&response_, &read_);
  }

  void OnRead(bool ok) {
    if (!ok) {  // the end
      reader_->Finish(&status_, &finished_);
      return;
    }
    if (!established_) {
      established_ = true;
      // A node serving its own watch says nothing of it as a proxy for the others.
      if (client_.endpoints_[index_].host != info_.node) client_.Answered(info_.node, index_);
    }
    if (ended_.ok()) {
      ended_ = Kind::Deliver(response_, info_, *shared_);
      if (!ended_.ok()) context_.TryCancel();  // the next read then fails
    }
    reader_->Read(&response_, &read_);
  }

  void OnFinished() {
    OnDone(status_);
    delete this;
  }

  void OnDone(const grpc::Status& status) {
    const bool cancelled = shared_->End();
    absl::Status result = ended_;
    if (result.ok() && cancelled) {
      result = CallError(absl::StatusCode::kCancelled, info_, "cancelled");
    } else if (result.ok() && status.ok()) {
      result = CallError(absl::StatusCode::kUnavailable, info_, "stream ended by the node");
    } else if (result.ok()) {
      result = FromGrpcStatus(status, info_);
    }
    // The endpoint could not dial the node behind it: so would it be through the others; the
    // node's next stream starts at the next endpoint (as a unary call, grpc_talos_client.cc).
    if (client_.NodeBehindUnreachable(result, index_)) {
      client_.StartNextAt(info_.node, shared_->candidates, position_);
      shared_->Finish(result);
      return;
    }
    // Not established and Unavailable: this endpoint could not serve it, the next may.
    if (!established_ && !cancelled && absl::IsUnavailable(result) &&
        position_ + 1 < shared_->candidates.size()) {
      (new StreamAttempt(client_, shared_, request_, info_.node, position_ + 1))->Start();
    } else {
      shared_->Finish(result);
    }
  }

  GrpcTalosClient& client_;
  std::shared_ptr<Shared> shared_;
  std::shared_ptr<const typename Kind::Request> request_;
  const size_t position_;  // in shared_->candidates
  const size_t index_;     // of the endpoint
  const CallInfo info_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientAsyncReader<typename Kind::Response>> reader_;
  typename Kind::Response response_;
  grpc::Status status_;  // the call's, once finished
  bool established_ = false;
  absl::Status ended_;  // set when the client ends the stream itself
  // The tags of its operations: one of each is in flight at a time.
  grpc_watch::QueuedOperation started_{[this](bool ok) { OnStarted(ok); }};
  grpc_watch::QueuedOperation read_{[this](bool ok) { OnRead(ok); }};
  grpc_watch::QueuedOperation finished_{[this](bool) { OnFinished(); }};
};

std::unique_ptr<CosiWatch> GrpcTalosClient::StartWatch(const std::string& node,
                                                       const CosiWatchRequest& request,
                                                       WatchCallbacks callbacks) {
  auto proto = std::make_shared<cosi::resource::WatchRequest>();
  proto->set_namespace_(request.namespace_name);
  proto->set_type(request.type);
  if (request.id) {
    proto->set_id(*request.id);
  } else {
    proto->mutable_options()->set_bootstrap_contents(true);
  }
  proto->set_api_version(1);  // BOOTSTRAPPED and ERRORED events, as the Go client asks
  return StreamAttempt<grpc_watch::CosiWatchStream>::Launch(*this, node, std::move(proto),
                                                            std::move(callbacks));
}

std::unique_ptr<TalosStream> GrpcTalosClient::StartEvents(const std::string& node,
                                                          const EventsRequest& request,
                                                          EventsCallbacks callbacks) {
  auto proto = std::make_shared<machine::EventsRequest>();
  proto->set_tail_events(request.tail_events);
  proto->set_tail_id(request.tail_id);
  proto->set_with_actor_id(request.with_actor_id);
  return StreamAttempt<grpc_watch::MachineEventsStream>::Launch(*this, node, std::move(proto),
                                                                std::move(callbacks));
}

}  // namespace tr::reconciler::talos
