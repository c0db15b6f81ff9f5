// The watches of GrpcTalosClient (see grpc_talos_client_impl.h), on gRPC's callback API: a
// watch is a chain of attempts, one per endpoint tried, each a ClientReadReactor that gRPC calls
// back when a message or the end arrives. No thread waits for a watch.
//
// Routing: as a read-only call until the watch is established (the node's first, empty
// message): an attempt that ends Unavailable before it moves on to the next endpoint. Once
// established, the watch ends with the stream and the caller starts a new one.
#include <condition_variable>
#include <optional>

#include "base/mutex.h"
#include "cosi/resource/state.grpc.pb.h"
#include "reconciler/clients/talos/grpc_talos_client_impl.h"
#include "reconciler/clients/talos/talos_convert.h"

namespace tr::reconciler::talos {
namespace grpc_watch {

// What a watch's handle, its attempts and the process's shutdown share.
class WatchShared {
 public:
  WatchShared(WatchCallbacks callbacks, std::vector<size_t> endpoints)
      : candidates(std::move(endpoints)), callbacks_(std::move(callbacks)) {}

  // Cancels the attempt in flight, and the watch before any later attempt starts.
  void Cancel() {
    MutexLock lock(mu_);
    cancelled_ = true;
    if (context_ != nullptr) context_->TryCancel();
  }
  // Registers the attempt about to start; false when the watch was cancelled first.
  bool Begin(grpc::ClientContext* context) {
    MutexLock lock(mu_);
    if (cancelled_) return false;
    context_ = context;
    return true;
  }
  // The attempt in flight has ended; true when the watch was cancelled.
  bool End() {
    MutexLock lock(mu_);
    context_ = nullptr;
    return cancelled_;
  }
  void Deliver(const CosiEvent& event) const {
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
  // Cancels the watch when the process shuts down.
  void CancelOn(const std::stop_token& shutdown) {
    on_shutdown_.emplace(shutdown, [this] { Cancel(); });
  }

  const std::vector<size_t> candidates;  // endpoint indices, in the order to try them

 private:
  WatchCallbacks callbacks_;
  Mutex mu_;
  std::condition_variable_any done_changed_;
  grpc::ClientContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<std::stop_callback<std::function<void()>>> on_shutdown_;
};

// The handle: cancels on destruction and waits for the end.
class GrpcCosiWatch final : public CosiWatch {
 public:
  explicit GrpcCosiWatch(std::shared_ptr<WatchShared> shared) : shared_(std::move(shared)) {}
  ~GrpcCosiWatch() override {
    shared_->Cancel();
    shared_->WaitDone();
  }
  void Cancel() override { shared_->Cancel(); }

 private:
  std::shared_ptr<WatchShared> shared_;
};

}  // namespace grpc_watch

using grpc_watch::GrpcCosiWatch;
using grpc_watch::WatchShared;

// One attempt through one endpoint; deletes itself when gRPC reports its end.
class GrpcTalosClient::WatchAttempt final
    : public grpc::ClientReadReactor<cosi::resource::WatchResponse> {
 public:
  WatchAttempt(GrpcTalosClient& client, std::shared_ptr<WatchShared> shared,
               std::shared_ptr<const cosi::resource::WatchRequest> request, std::string node,
               size_t position)
      : client_(client),
        shared_(std::move(shared)),
        request_(std::move(request)),
        position_(position),
        index_(shared_->candidates[position]),
        info_{"cosi.State/Watch", std::move(node), client_.endpoints_[index_].Target()} {}

  // Starts the call, or reports Cancelled when the watch was cancelled before.
  void Start() {
    context_.AddMetadata("node", info_.node);
    if (!shared_->Begin(&context_)) {
      shared_->Finish(CallError(absl::StatusCode::kCancelled, info_, "cancelled"));
      delete this;
      return;
    }
    client_.stubs_[index_].cosi->async()->Watch(&context_, request_.get(), this);
    StartRead(&response_);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // the end: OnDone follows
    if (!established_) {
      established_ = true;
      client_.preferred_.store(index_);
    }
    for (const auto& message : response_.event()) {
      if (message.event_type() == cosi::resource::ERRORED) {
        // The node's watch fell behind its history ("buffer overrun"); nothing more is sent.
        const std::string why = message.has_error() ? message.error() : "watch errored";
        ended_ = CallError(absl::StatusCode::kAborted, info_, why);
        context_.TryCancel();
        return;
      }
      if (std::optional<CosiEvent> event = ToCosiEvent(message)) shared_->Deliver(*event);
    }
    StartRead(&response_);
  }

  void OnDone(const grpc::Status& status) override {
    const bool cancelled = shared_->End();
    absl::Status result = ended_;
    if (result.ok() && cancelled) {
      result = CallError(absl::StatusCode::kCancelled, info_, "cancelled");
    } else if (result.ok() && status.ok()) {
      result = CallError(absl::StatusCode::kUnavailable, info_, "stream ended by the node");
    } else if (result.ok()) {
      result = FromGrpcStatus(status, info_);
    }
    // Not established and Unavailable: this endpoint could not serve it, the next may.
    if (!established_ && !cancelled && absl::IsUnavailable(result) &&
        position_ + 1 < shared_->candidates.size()) {
      (new WatchAttempt(client_, shared_, request_, info_.node, position_ + 1))->Start();
    } else {
      shared_->Finish(result);
    }
    delete this;
  }

 private:
  GrpcTalosClient& client_;
  std::shared_ptr<WatchShared> shared_;
  std::shared_ptr<const cosi::resource::WatchRequest> request_;
  const size_t position_;  // in shared_->candidates
  const size_t index_;     // of the endpoint
  const CallInfo info_;
  grpc::ClientContext context_;
  cosi::resource::WatchResponse response_;
  bool established_ = false;
  absl::Status ended_;  // set when the client ends the stream itself
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
  auto shared = std::make_shared<WatchShared>(std::move(callbacks), Candidates(node));
  shared->CancelOn(options_.shutdown);
  auto handle = std::make_unique<GrpcCosiWatch>(shared);
  (new WatchAttempt(*this, std::move(shared), std::move(proto), node, 0))->Start();
  return handle;
}

}  // namespace tr::reconciler::talos
