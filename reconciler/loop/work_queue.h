// The controller's work queue: cluster names, each due at a time, handed out one at a time
// per key. Level-triggered like a Kubernetes controller's queue: adding a key that is already
// queued only moves its due time earlier, so a burst of webhooks and timers becomes one
// reconcile; a key added while it is being processed is handed out again after Done, so two
// reconciles of one cluster never run at once and no trigger is lost.
//
// Many workers (hundreds, for a large fleet rolling out at once) wait in Take without a
// thundering herd: one idle worker at a time keeps the timer (waits for the earliest due key
// or a change), the others sleep until that post is free and a key is queued. A key wakes the
// timer keeper only when it is due before the keeper would wake anyway; a keeper that takes a
// key hands the post to another idle worker only while another key is queued; a worker that
// ends its key with DoneAndTake takes the post itself if it is free. So one cluster resynced
// alone wakes one thread per reconcile, not four.
//
// A change the reconcile looks at (a node's, AddChange) is the exception: one that comes while
// its key is processed is handed out again only when it came after that processing's last look
// began (Done's `looked_at`), since a look that began after it saw it. Two streams saying one
// reboot, or a cordon seen by the look after the upgrade call, then cost no second reconcile.
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

  // As AddAt, for a change a look at the key reads, which came at `at` (Env::Monotonic).
  void AddChange(const std::string& key, TimePoint when, Env::Instant at);

  // The key due earliest at or before `now`, now marked in process; nullopt when none is due.
  std::optional<std::string> TryTake(TimePoint now);

  // Waits until a key is due by `env`'s clock and takes it; nullopt once `stop` fires.
  std::optional<std::string> Take(Env& env, std::stop_token stop);

  // Ends processing of `key`; a trigger that came meanwhile is queued again, and a change
  // (AddChange) only when it came at or after `looked_at`, when the processing's last look
  // began (nullopt: it looked at nothing).
  void Done(const std::string& key, std::optional<Env::Instant> looked_at = std::nullopt);

  // Done, then Take, holding the lock between them: what a worker does between two keys.
  std::optional<std::string> DoneAndTake(const std::string& key,
                                         std::optional<Env::Instant> looked_at, Env& env,
                                         std::stop_token stop);

  // The earliest due time of a key not in process; nullopt when there is none.
  std::optional<TimePoint> NextDue() const;

 private:
  std::optional<std::string> TakeLocked(TimePoint now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `hand_off` is set when the caller is to wake an idle worker for the timer post once it
  // released the lock: woken under it, that worker would only sleep again on the lock.
  std::optional<std::string> WaitAndTakeLocked(MutexLock& lock, Env& env, std::stop_token stop,
                                               bool& hand_off) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `wake_a_worker`: false when the caller Takes right after, and so keeps a free post itself.
  void DoneLocked(const std::string& key, std::optional<Env::Instant> looked_at, bool wake_a_worker)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Keeps the earliest `when` a key being processed is due again at.
  void DueAfterDoneLocked(const std::string& key, TimePoint when)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<TimePoint> NextDueLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void QueueLocked(const std::string& key, TimePoint when) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A key was queued due at `when`: wakes the timer keeper if it would wake later than that
  // (only it: the others wait for the post), or, when the post is free, one idle worker if
  // `wake_a_worker`.
  void WakeForLocked(TimePoint when, bool wake_a_worker) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  std::condition_variable_any timer_;  // the timer keeper waits here
  std::condition_variable_any idle_;   // other idle workers wait here for the post
  bool timer_kept_ ABSL_GUARDED_BY(mu_) = false;
  TimePoint keeper_wakes_at_ ABSL_GUARDED_BY(mu_) = TimePoint::max();
  // Queued keys and when they are due (by key, and in due order); keys handed out, not yet
  // Done; triggers that came while their key was processed; a generation bumped to wake the
  // timer keeper.
  std::map<std::string, TimePoint> due_ ABSL_GUARDED_BY(mu_);
  std::set<std::pair<TimePoint, std::string>> due_order_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> processing_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, TimePoint> due_after_done_ ABSL_GUARDED_BY(mu_);
  // Changes that came while their key was processed: the earliest due time and the latest
  // arrival.
  struct Change {
    TimePoint when;
    Env::Instant at;
  };
  std::map<std::string, Change> changes_after_done_ ABSL_GUARDED_BY(mu_);
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tr::reconciler
