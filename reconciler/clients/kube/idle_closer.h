// One thread that closes the idle connections of many clients: each Kubernetes client registers
// a function that closes its connection when no request has used it for a while, and the closer
// calls every one of them, every half of the shortest idle timeout registered. So 1,000
// clusters' clients cost one thread, not 1,000, and a connection closes between one and one and
// a half idle timeouts after its last request. At each sweep with no request on any client, for
// two idle timeouts after one closed a connection, the closer gives the memory glibc kept back
// to the system (malloc_trim): glibc keeps what was freed, and an idle daemon would hold for
// good what its last reconciles used (idle_bench, 50 clusters: 30.8 MiB anonymous without it,
// 19.6 MiB with it). Two timeouts: the Talos channels of the same reconciles close up to a minute
// after their Kubernetes connections (gRPC's idle timeout), and free their buffers then.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <thread>

#include "base/env.h"
#include "base/mutex.h"

namespace tr::reconciler::kube {

class IdleCloser {
 public:
  enum class Idle { kBusy, kIdle, kClosed };
  // Closes the client's connection if it has been idle long enough at `now`, and says whether a
  // request is in flight, none is, or none is and it closed the connection. Runs on the
  // closer's thread with the closer's lock held: it must not call the closer back.
  using CloseIfIdle = std::function<Idle(Env::TimePoint now)>;

  // The process's closer: made for the first client that asks, on that client's env (a process
  // has one), ended with the last one.
  static std::shared_ptr<IdleCloser> Shared(Env& env);

  // `give_back_memory`: what the sweeps that give memory back (above) call.
  explicit IdleCloser(Env& env, std::function<void()> give_back_memory = DefaultGiveBackMemory);
  ~IdleCloser();
  IdleCloser(const IdleCloser&) = delete;
  IdleCloser& operator=(const IdleCloser&) = delete;

  // Calls `close_if_idle` at least every `idle_timeout / 2` until Remove of the id returned.
  int Add(std::chrono::milliseconds idle_timeout, CloseIfIdle close_if_idle);
  // Once it returns, the function of `id` is not running and is not called again.
  void Remove(int id);

 private:
  struct Client {
    std::chrono::milliseconds idle_timeout{};
    CloseIfIdle close_if_idle{};
  };
  static void DefaultGiveBackMemory();
  // Whether to give memory back now: no request in flight, a connection closed lately.
  bool Sweep(Env::TimePoint now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Run(std::stop_token stop);
  std::chrono::milliseconds ShortestTimeout() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::chrono::milliseconds Period() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Env& env_;
  const std::function<void()> give_back_memory_;
  Mutex mu_;
  std::condition_variable_any wake_;
  std::map<int, Client> clients_ ABSL_GUARDED_BY(mu_);
  int next_id_ ABSL_GUARDED_BY(mu_) = 0;
  // The wait between two sweeps; a client with a shorter timeout wakes the thread.
  std::chrono::milliseconds period_ ABSL_GUARDED_BY(mu_){std::chrono::hours(1)};
  bool shortened_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<Env::TimePoint> last_closed_ ABSL_GUARDED_BY(mu_);
  std::jthread thread_;  // last: started once everything it uses exists
};

}  // namespace tr::reconciler::kube
