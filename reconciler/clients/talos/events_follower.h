// EventsFollower: waits for a node to come back RUNNING and ready after an operation that
// reboots it (legacy Upgrade, Reboot, Rollback), following its MachineService/Events stream
// across the reboot the way `talosctl upgrade --wait` does (docs/talos-api.md §6.4):
//
//  1. Subscribe to Events (tail_events 0). The first message is an empty hello; once it arrives
//     the subscription is live and `start` runs (e.g. calls Upgrade) and yields the actor id.
//  2. Until the stream breaks, only events carrying that actor id count. A SequenceEvent with an
//     error fails the wait.
//  3. When the stream breaks (EOF or Unavailable: the node is rebooting) resubscribe with
//     tail_events -1 after a backoff, again and again until the deadline. From now on events are
//     not filtered by actor id: the rebooted node does not know the old actor.
//  4. Done at a MachineStatusEvent with stage RUNNING and ready, seen after the break; when a boot
//     id from before is given, also only once the node reports a different boot id
//     (PermissionDenied on the boot id skips that check, as talosctl does).
//
// Errors: the `start` error as is; Aborted for a SequenceEvent with a FATAL or CANCELED error
// (the operation failed on the node); Unavailable for LOCKED (another sequence holds the lock:
// the request was accepted but nothing started); DeadlineExceeded naming the last stage seen;
// Cancelled when `stop` is requested; the Events error as is when it is not a stream break
// (PermissionDenied, Unimplemented, ...) or when the very first subscription fails.
//
// Time, sleeping and the jitter of the resubscribe backoff come from the injected Env. Thread-safety: one FollowUntilReady at a time
// per follower; the client may be shared.
#pragma once

#include <chrono>
#include <functional>
#include <stop_token>
#include <string>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "reconciler/clients/talos/talos_client.h"

namespace tr::reconciler::talos {

struct FollowOptions {
  // Runs once the first subscription is live; returns the operation's actor id. Empty: the
  // operation was started already and `actor_id` names it (the first subscription then asks
  // for every buffered event).
  std::function<absl::StatusOr<std::string>()> start;
  std::string actor_id;
  // The node's boot id before the operation; empty = no boot id check.
  std::string boot_id_before;
  // Whether RUNNING and ready counts only after the stream broke (the node rebooted).
  bool expect_reboot = true;
  Env::TimePoint deadline;
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{std::chrono::seconds(5)};
  // Sees every event that counts (after the actor filter), hello messages excluded.
  std::function<void(const MachineEvent&)> on_event;
};

struct FollowResult {
  std::string actor_id;
  int subscriptions = 0;  // Events calls made
  int events = 0;         // events that counted
  MachineStatus status;   // the final RUNNING and ready status
  std::string boot_id;    // the new boot id when it was checked
};

class EventsFollower {
 public:
  EventsFollower(TalosClient& client, Env& env) : client_(client), env_(env) {}

  // See the file comment. `node` is the node's address as used for the `node` metadata.
  absl::StatusOr<FollowResult> FollowUntilReady(const std::string& node,
                                                const FollowOptions& options, std::stop_token stop);

 private:
  TalosClient& client_;
  Env& env_;
};

}  // namespace tr::reconciler::talos
