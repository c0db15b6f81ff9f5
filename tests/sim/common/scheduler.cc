#include "tests/sim/common/scheduler.h"

#include <vector>

namespace tr::sim {

RealScheduler::RealScheduler() : worker_([this] { Run(); }) {}

RealScheduler::~RealScheduler() { Stop(); }

Scheduler::TimePoint RealScheduler::Now() const { return std::chrono::steady_clock::now(); }

std::chrono::system_clock::time_point RealScheduler::WallNow() const {
  return std::chrono::system_clock::now();
}

void RealScheduler::After(Duration delay, Task task) {
  std::lock_guard lock(mu_);
  if (stopped_) return;
  queue_.emplace(std::make_pair(Now() + std::max(delay, Duration::zero()), next_seq_++),
                 std::move(task));
  cv_.notify_all();
}

void RealScheduler::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopped_ && !worker_.joinable()) return;
    stopped_ = true;
    queue_.clear();
    cv_.notify_all();
  }
  if (worker_.joinable() && worker_.get_id() != std::this_thread::get_id()) worker_.join();
}

void RealScheduler::Run() {
  std::unique_lock lock(mu_);
  while (!stopped_) {
    if (queue_.empty()) {
      cv_.wait(lock);
      continue;
    }
    auto due = queue_.begin()->first.first;
    if (Now() < due) {
      cv_.wait_until(lock, due);
      continue;
    }
    Task task = std::move(queue_.begin()->second);
    queue_.erase(queue_.begin());
    lock.unlock();
    task();
    lock.lock();
  }
}

ManualScheduler::ManualScheduler(std::chrono::system_clock::time_point wall_epoch)
    : now_(TimePoint(std::chrono::hours(1))), wall_epoch_(wall_epoch) {}

Scheduler::TimePoint ManualScheduler::Now() const {
  std::lock_guard lock(mu_);
  return now_;
}

std::chrono::system_clock::time_point ManualScheduler::WallNow() const {
  std::lock_guard lock(mu_);
  return wall_epoch_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                           now_ - TimePoint(std::chrono::hours(1)));
}

void ManualScheduler::After(Duration delay, Task task) {
  std::lock_guard lock(mu_);
  if (stopped_) return;
  queue_.emplace(std::make_pair(now_ + std::max(delay, Duration::zero()), next_seq_++),
                 std::move(task));
}

void ManualScheduler::Stop() {
  std::lock_guard lock(mu_);
  stopped_ = true;
  queue_.clear();
}

void ManualScheduler::AdvanceBy(Duration delta) {
  std::unique_lock lock(mu_);
  const TimePoint target = now_ + delta;
  while (!queue_.empty() && queue_.begin()->first.first <= target) {
    auto it = queue_.begin();
    now_ = std::max(now_, it->first.first);
    Task task = std::move(it->second);
    queue_.erase(it);
    lock.unlock();
    task();
    lock.lock();
  }
  now_ = std::max(now_, target);
}

size_t ManualScheduler::Pending() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

}  // namespace tr::sim
