#include "reconciler/clients/talos/events_follower.h"

#include <algorithm>
#include <optional>

#include "fmt/format.h"

namespace tr::reconciler::talos {
namespace {

const char* StageName(core::MachineStage stage) {
  static constexpr const char* kNames[] = {"UNKNOWN",       "BOOTING",   "INSTALLING",
                                           "MAINTENANCE",   "RUNNING",   "REBOOTING",
                                           "SHUTTING_DOWN", "RESETTING", "UPGRADING"};
  const auto index = static_cast<size_t>(stage);
  return index < std::size(kNames) ? kNames[index] : "UNKNOWN";
}

// The state of one FollowUntilReady across its subscriptions.
class FollowState {
 public:
  FollowState(TalosClient& client, const std::string& node, const FollowOptions& options)
      : client_(client), node_(node), options_(options) {
    result.actor_id = options.actor_id;
    started_ = !options.start;
  }

  // Handles one event; false ends the subscription (done or failed).
  bool OnEvent(const MachineEvent& event) {
    const bool hello = std::holds_alternative<HelloEvent>(event.payload);
    if (hello) got_hello = true;
    if (!started_ && !Start()) return false;
    if (hello) return true;
    if (!broke && !result.actor_id.empty() && event.actor_id != result.actor_id) return true;
    ++result.events;
    if (options_.on_event) options_.on_event(event);
    if (const auto* sequence = std::get_if<SequenceEvent>(&event.payload)) {
      return OnSequence(*sequence);
    }
    if (const auto* machine = std::get_if<MachineStatusEvent>(&event.payload)) {
      return OnMachineStatus(machine->status);
    }
    return true;
  }

  FollowResult result;
  std::optional<absl::Status> failure;
  bool done = false;
  bool broke = false;      // the stream broke after the operation started
  bool got_hello = false;  // in the current subscription
  bool started() const { return started_; }
  core::MachineStage last_stage = core::MachineStage::kUnknown;

 private:
  bool Start() {
    started_ = true;
    auto actor = options_.start();
    if (!actor.ok()) {
      failure = actor.status();
      return false;
    }
    result.actor_id = *actor;
    return true;
  }

  bool OnSequence(const SequenceEvent& sequence) {
    if (!sequence.error_code) return true;
    const auto code = *sequence.error_code == ErrorCode::kLocked ? absl::StatusCode::kUnavailable
                                                                 : absl::StatusCode::kAborted;
    failure = absl::Status(code, fmt::format("node {}: sequence {} failed: {}", node_,
                                             sequence.sequence, sequence.error_message));
    return false;
  }

  bool OnMachineStatus(const MachineStatus& status) {
    last_stage = status.stage;
    if (!status.RunningAndReady() || (options_.expect_reboot && !broke)) return true;
    if (!options_.boot_id_before.empty()) {
      auto boot_id = client_.BootId(node_);
      if (boot_id.ok()) {
        if (*boot_id == options_.boot_id_before) return true;  // not rebooted yet
        result.boot_id = *boot_id;
      } else if (boot_id.status().code() != absl::StatusCode::kPermissionDenied) {
        return true;  // cannot tell yet; keep following
      }
    }
    result.status = status;
    done = true;
    return false;
  }

  TalosClient& client_;
  const std::string& node_;
  const FollowOptions& options_;
  bool started_ = false;
};

}  // namespace

absl::StatusOr<FollowResult> EventsFollower::FollowUntilReady(const std::string& node,
                                                              const FollowOptions& options,
                                                              std::stop_token stop) {
  FollowState state(client_, node, options);
  int retry = 1;  // resubscriptions since the last hello
  const bool started_before = !options.start;
  while (true) {
    if (stop.stop_requested()) return absl::CancelledError(fmt::format("node {}: cancelled", node));
    const auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(options.deadline - env_.Now());
    if (remaining.count() <= 0) {
      return absl::DeadlineExceededError(
          fmt::format("node {}: not RUNNING and ready by the deadline (last stage {})", node,
                      StageName(state.last_stage)));
    }
    EventsRequest request;
    request.tail_events =
        (state.broke || (started_before && state.result.subscriptions == 0)) ? -1 : 0;
    state.got_hello = false;
    const absl::Status status = client_.Events(
        node, request, remaining, stop, [&](const MachineEvent& e) { return state.OnEvent(e); });
    ++state.result.subscriptions;
    if (state.failure) return *state.failure;
    if (state.done) return state.result;
    if (stop.stop_requested()) return absl::CancelledError(fmt::format("node {}: cancelled", node));
    if (status.code() == absl::StatusCode::kDeadlineExceeded) {
      return absl::DeadlineExceededError(
          fmt::format("node {}: not RUNNING and ready by the deadline (last stage {}): {}", node,
                      StageName(state.last_stage), std::string(status.message())));
    }
    // An Events call that ends on its own is a stream break too. A break before the operation
    // started is the caller's problem, not a reboot.
    const bool broken = status.ok() || status.code() == absl::StatusCode::kUnavailable;
    if (!broken || !state.started()) {
      return status.ok() ? absl::UnavailableError(fmt::format("node {}: event stream ended", node))
                         : status;
    }
    state.broke = true;
    if (state.got_hello) retry = 1;
    const BackoffPolicy backoff{options.initial_backoff, options.max_backoff, 0};
    if (!env_.SleepFor(JitteredBackoff(backoff, retry++, env_), stop)) {
      return absl::CancelledError(fmt::format("node {}: cancelled", node));
    }
  }
}

}  // namespace tr::reconciler::talos
