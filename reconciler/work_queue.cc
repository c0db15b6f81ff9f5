#include "reconciler/work_queue.h"

namespace tr::reconciler {
namespace {

void KeepEarliest(std::map<std::string, WorkQueue::TimePoint>& due, const std::string& key,
                  WorkQueue::TimePoint when) {
  auto [it, inserted] = due.try_emplace(key, when);
  if (!inserted && when < it->second) it->second = when;
}

}  // namespace

void WorkQueue::AddAt(const std::string& key, TimePoint when) {
  {
    MutexLock lock(mu_);
    KeepEarliest(processing_.contains(key) ? due_after_done_ : due_, key, when);
    ++generation_;
  }
  changed_.notify_all();
}

std::optional<std::string> WorkQueue::TryTake(TimePoint now) {
  MutexLock lock(mu_);
  return TakeLocked(now);
}

std::optional<std::string> WorkQueue::TakeLocked(TimePoint now) {
  auto best = due_.end();
  for (auto it = due_.begin(); it != due_.end(); ++it) {
    if (it->second <= now && (best == due_.end() || it->second < best->second)) best = it;
  }
  if (best == due_.end()) return std::nullopt;
  std::string key = best->first;
  due_.erase(best);
  processing_.insert(key);
  return key;
}

std::optional<std::string> WorkQueue::Take(Env& env, std::stop_token stop) {
  MutexLock lock(mu_);
  while (!stop.stop_requested()) {
    const TimePoint now = env.Now();
    if (auto key = TakeLocked(now)) return key;
    // Wake when the earliest key falls due or the queue changes.
    const uint64_t seen = generation_;
    auto changed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return generation_ != seen; };
    if (std::optional<TimePoint> next = NextDueLocked()) {
      changed_.wait_for(lock, stop, *next - now, changed);
    } else {
      changed_.wait(lock, stop, changed);
    }
  }
  return std::nullopt;
}

void WorkQueue::Done(const std::string& key) {
  {
    MutexLock lock(mu_);
    processing_.erase(key);
    if (auto it = due_after_done_.find(key); it != due_after_done_.end()) {
      KeepEarliest(due_, key, it->second);
      due_after_done_.erase(it);
    }
    ++generation_;
  }
  changed_.notify_all();
}

std::optional<WorkQueue::TimePoint> WorkQueue::NextDue() const {
  MutexLock lock(mu_);
  return NextDueLocked();
}

std::optional<WorkQueue::TimePoint> WorkQueue::NextDueLocked() const {
  std::optional<TimePoint> next;
  for (const auto& [key, when] : due_) {
    if (!next || when < *next) next = when;
  }
  return next;
}

}  // namespace tr::reconciler
