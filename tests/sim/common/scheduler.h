// The simulator's only source of time: a clock plus delayed tasks. Every simulated duration
// (image pull, install, reboot, boot) goes through a Scheduler, so the node state machine can be
// driven by a ManualScheduler in unit tests and by the RealScheduler in a running fleet.
//
// Thread-safety: both implementations are safe to call from any thread. Tasks run one at a time,
// never while the scheduler holds its own lock, so a task may schedule further tasks. The
// RealScheduler runs tasks on its own thread; the ManualScheduler runs them inside AdvanceBy /
// RunDue on the calling thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace tr::sim {

class Scheduler {
 public:
  using Duration = std::chrono::nanoseconds;
  using TimePoint = std::chrono::steady_clock::time_point;
  using Task = std::function<void()>;

  virtual ~Scheduler() = default;
  // Monotonic time for ordering and deadlines.
  virtual TimePoint Now() const = 0;
  // Calendar time for timestamps (journal, events, Kubernetes objects).
  virtual std::chrono::system_clock::time_point WallNow() const = 0;
  // Runs `task` once `delay` has passed (delay <= 0: as soon as possible, after tasks already
  // due). Tasks due at the same time run in the order they were scheduled. After Stop(), tasks
  // are dropped.
  virtual void After(Duration delay, Task task) = 0;
  // Drops pending tasks and refuses new ones; waits for a running task to finish.
  virtual void Stop() = 0;
};

// Wall-clock scheduler with one worker thread.
class RealScheduler final : public Scheduler {
 public:
  RealScheduler();
  ~RealScheduler() override;
  RealScheduler(const RealScheduler&) = delete;
  RealScheduler& operator=(const RealScheduler&) = delete;

  TimePoint Now() const override;
  std::chrono::system_clock::time_point WallNow() const override;
  void After(Duration delay, Task task) override;
  void Stop() override;

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<std::pair<TimePoint, uint64_t>, Task> queue_;
  uint64_t next_seq_ = 0;
  bool stopped_ = false;
  std::thread worker_;
};

// Simulated clock for tests: time moves only when the test says so.
class ManualScheduler final : public Scheduler {
 public:
  explicit ManualScheduler(
      std::chrono::system_clock::time_point wall_epoch =
          std::chrono::system_clock::time_point(std::chrono::seconds(1'780'000'000)));

  TimePoint Now() const override;
  std::chrono::system_clock::time_point WallNow() const override;
  void After(Duration delay, Task task) override;
  void Stop() override;

  // Moves time forward by `delta`, running every task that falls due on the way, in order, with
  // Now() equal to each task's due time while it runs.
  void AdvanceBy(Duration delta);
  // Runs the tasks already due without moving time.
  void RunDue() { AdvanceBy(Duration::zero()); }
  // Number of tasks not yet run.
  size_t Pending() const;

 private:
  mutable std::mutex mu_;
  TimePoint now_;
  std::chrono::system_clock::time_point wall_epoch_;
  std::multimap<std::pair<TimePoint, uint64_t>, Task> queue_;
  uint64_t next_seq_ = 0;
  bool stopped_ = false;
};

}  // namespace tr::sim
