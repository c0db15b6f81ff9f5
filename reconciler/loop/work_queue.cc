#include "reconciler/loop/work_queue.h"

#include <algorithm>

namespace tr::reconciler {

void WorkQueue::QueueLocked(const std::string& key, TimePoint when) {
  auto [it, inserted] = due_.try_emplace(key, when);
  if (!inserted) {
    if (when >= it->second) return;
    due_order_.erase({it->second, key});
    it->second = when;
  }
  due_order_.emplace(when, key);
}

void WorkQueue::WakeForLocked(TimePoint when, bool wake_a_worker) {
  if (timer_kept_) {
    if (when >= keeper_wakes_at_) return;
    ++generation_;
    timer_.notify_one();
  } else if (wake_a_worker) {
    idle_.notify_one();
  }
}

void WorkQueue::AddAt(const std::string& key, TimePoint when) {
  MutexLock lock(mu_);
  if (processing_.contains(key)) {
    // Nobody may take it before Done, which wakes whom it needs.
    DueAfterDoneLocked(key, when);
    return;
  }
  QueueLocked(key, when);
  WakeForLocked(when, /*wake_a_worker=*/true);
}

void WorkQueue::AddChange(const std::string& key, TimePoint when, Env::Instant at) {
  MutexLock lock(mu_);
  if (processing_.contains(key)) {
    auto [it, inserted] = changes_after_done_.try_emplace(key, Change{when, at});
    if (!inserted) {
      it->second.when = std::min(it->second.when, when);
      it->second.at = std::max(it->second.at, at);
    }
    return;
  }
  QueueLocked(key, when);
  WakeForLocked(when, /*wake_a_worker=*/true);
}

void WorkQueue::DueAfterDoneLocked(const std::string& key, TimePoint when) {
  auto [it, inserted] = due_after_done_.try_emplace(key, when);
  if (!inserted && when < it->second) it->second = when;
}

std::optional<std::string> WorkQueue::TryTake(TimePoint now) {
  MutexLock lock(mu_);
  return TakeLocked(now);
}

std::optional<std::string> WorkQueue::TakeLocked(TimePoint now) {
  if (due_order_.empty() || due_order_.begin()->first > now) return std::nullopt;
  std::string key = due_order_.begin()->second;
  due_order_.erase(due_order_.begin());
  due_.erase(key);
  processing_.insert(key);
  return key;
}

std::optional<std::string> WorkQueue::Take(Env& env, std::stop_token stop) {
  bool hand_off = false;
  std::optional<std::string> key;
  {
    MutexLock lock(mu_);
    key = WaitAndTakeLocked(lock, env, stop, hand_off);
  }
  if (hand_off) idle_.notify_one();
  return key;
}

std::optional<std::string> WorkQueue::WaitAndTakeLocked(MutexLock& lock, Env& env,
                                                        std::stop_token stop, bool& hand_off) {
  bool keeper = false;  // this worker keeps the timer
  while (!stop.stop_requested()) {
    const TimePoint now = env.Now();
    if (auto key = TakeLocked(now)) {
      // Leaving: the post goes to another idle worker while another key is queued (it may be
      // due already), woken by the caller once the lock is free. With none it stays free: the
      // next AddAt wakes a worker, and a worker back from its key takes it.
      if (keeper) timer_kept_ = false;
      hand_off = !timer_kept_ && !due_order_.empty();
      return key;
    }
    if (!keeper && timer_kept_) {
      env.Wait(idle_, lock, stop, Env::kNoDeadline, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !timer_kept_ && !due_order_.empty();
      });
      continue;
    }
    keeper = timer_kept_ = true;
    // Wake when the earliest key falls due or an earlier one is queued.
    const uint64_t seen = generation_;
    auto changed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return generation_ != seen; };
    if (std::optional<TimePoint> next = NextDueLocked()) {
      keeper_wakes_at_ = *next;
      env.WaitFor(timer_, lock, stop, *next - now, changed);
    } else {
      keeper_wakes_at_ = TimePoint::max();
      env.Wait(timer_, lock, stop, Env::kNoDeadline, changed);
    }
  }
  if (keeper) {
    timer_kept_ = false;
    idle_.notify_one();
  }
  return std::nullopt;
}

void WorkQueue::Done(const std::string& key, std::optional<Env::Instant> looked_at) {
  MutexLock lock(mu_);
  DoneLocked(key, looked_at, /*wake_a_worker=*/true);
}

std::optional<std::string> WorkQueue::DoneAndTake(const std::string& key,
                                                  std::optional<Env::Instant> looked_at, Env& env,
                                                  std::stop_token stop) {
  bool hand_off = false;
  std::optional<std::string> next;
  {
    MutexLock lock(mu_);
    DoneLocked(key, looked_at, /*wake_a_worker=*/false);
    next = WaitAndTakeLocked(lock, env, stop, hand_off);
  }
  if (hand_off) idle_.notify_one();
  return next;
}

void WorkQueue::DoneLocked(const std::string& key, std::optional<Env::Instant> looked_at,
                           bool wake_a_worker) {
  processing_.erase(key);
  if (auto it = changes_after_done_.find(key); it != changes_after_done_.end()) {
    if (!looked_at || it->second.at >= *looked_at) DueAfterDoneLocked(key, it->second.when);
    changes_after_done_.erase(it);
  }
  if (auto it = due_after_done_.find(key); it != due_after_done_.end()) {
    const TimePoint when = it->second;
    due_after_done_.erase(it);
    QueueLocked(key, when);
    WakeForLocked(when, wake_a_worker);
  }
}

std::optional<WorkQueue::TimePoint> WorkQueue::NextDue() const {
  MutexLock lock(mu_);
  return NextDueLocked();
}

std::optional<WorkQueue::TimePoint> WorkQueue::NextDueLocked() const {
  if (due_order_.empty()) return std::nullopt;
  return due_order_.begin()->first;
}

}  // namespace tr::reconciler
