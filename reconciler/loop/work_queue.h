// The controller's work queue: cluster names, each due at a time, handed out one at a time
// per key. Level-triggered like a Kubernetes controller's queue: adding a key that is already
// queued only moves its due time earlier, so a burst of webhooks and timers becomes one
// reconcile; a key added while it is being processed is handed out again after Done, so two
// reconciles of one cluster never run at once and no trigger is lost.
//
// Many workers (hundreds, for a large fleet rolling out at once) wait in Take without a
// thundering herd: one idle worker at a time keeps the timer (waits for the earliest due key
// or a change), the others sleep until it leaves that post; a change wakes only the timer
// keeper, and a keeper that takes a key hands the post to one other idle worker.
//
// Thread-safe. Time is passed in; Take reads it from an Env and waits through it, so its timer
// runs in simulated time under a test.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <utility>

#include "base/env.h"
#include "base/mutex.h"

namespace tr::reconciler {

class WorkQueue {
 public:
  using TimePoint = std::chrono::system_clock::time_point;

  // Queues `key` due at `when`, or moves it earlier if already queued.
  void AddAt(const std::string& key, TimePoint when);

  // The key due earliest at or before `now`, now marked in process; nullopt when none is due.
  std::optional<std::string> TryTake(TimePoint now);

  // Waits until a key is due by `env`'s clock and takes it; nullopt once `stop` fires.
  std::optional<std::string> Take(Env& env, std::stop_token stop);

  // Ends processing of `key`; a trigger that came meanwhile is queued again.
  void Done(const std::string& key);

  // The earliest due time of a key not in process; nullopt when there is none.
  std::optional<TimePoint> NextDue() const;

 private:
  std::optional<std::string> TakeLocked(TimePoint now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<TimePoint> NextDueLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void QueueLocked(const std::string& key, TimePoint when) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Marks a change and wakes the timer keeper (only it: the others wait for the post).
  void ChangedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  std::condition_variable_any timer_;  // the timer keeper waits here
  std::condition_variable_any idle_;   // other idle workers wait here for the post
  bool timer_kept_ ABSL_GUARDED_BY(mu_) = false;
  // Queued keys and when they are due (by key, and in due order); keys handed out, not yet
  // Done; triggers that came while their key was processed; a generation bumped on every
  // change, which wakes the timer keeper.
  std::map<std::string, TimePoint> due_ ABSL_GUARDED_BY(mu_);
  std::set<std::pair<TimePoint, std::string>> due_order_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> processing_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, TimePoint> due_after_done_ ABSL_GUARDED_BY(mu_);
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tr::reconciler
