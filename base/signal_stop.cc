#include "base/signal_stop.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <optional>

#include "base/env.h"
#include "base/thread_name.h"

namespace tr {

namespace {

// How long poll may block: until `deadline` when there is one, else `otherwise` (-1: no limit).
int PollTimeoutMs(const std::optional<Env::Instant>& deadline, Env& env, int otherwise) {
  if (!deadline) return otherwise;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - env.Monotonic());
  const int ms = static_cast<int>(std::max<int64_t>(left.count(), 0));
  return otherwise < 0 ? ms : std::min(ms, otherwise);
}

}  // namespace

SignalStop::SignalStop(SignalStopOptions options, Env& env)
    : options_(std::move(options)), wake_(eventfd(0, EFD_CLOEXEC)) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  watcher_ = std::jthread([this, set, &env](std::stop_token own) {
    NameThisThread("signals");
    // Asleep until a signal, the grace's end or the destructor: an idle daemon's thread does
    // not wake five times a second. Without the descriptors it looks every 200 ms instead.
    const int signals = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    const int tick_ms = signals >= 0 && wake_ >= 0 ? -1 : 200;
    std::optional<Env::Instant> deadline;
    while (!own.stop_requested()) {
      pollfd ready[2] = {{signals, POLLIN, 0}, {wake_, POLLIN, 0}};
      poll(ready, 2, PollTimeoutMs(deadline, env, tick_ms));
      timespec now{0, 0};
      const bool signalled = sigtimedwait(&set, nullptr, &now) > 0;  // takes it from signalfd too
      const bool first = signalled && !stop_.stop_requested();
      if (first) {
        if (options_.on_stop) options_.on_stop();
        stop_.request_stop();
        if (options_.grace) deadline = env.Monotonic() + *options_.grace;
      } else if (signalled || (deadline && env.Monotonic() >= *deadline)) {
        if (options_.on_exit) {
          options_.on_exit(signalled ? ForcedExit::kSecondSignal : ForcedExit::kGraceOver);
        }
        std::_Exit(options_.exit_code);
      }
    }
    if (signals >= 0) close(signals);
  });
}

SignalStop::~SignalStop() {
  watcher_.request_stop();
  if (wake_ >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = write(wake_, &one, sizeof one);
  }
  watcher_.join();
  if (wake_ >= 0) close(wake_);
}

}  // namespace tr
