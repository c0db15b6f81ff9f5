#include "base/signal_stop.h"

#include <pthread.h>

#include <csignal>
#include <cstdlib>
#include <ctime>

#include "base/env.h"

namespace tr {

SignalStop::SignalStop(SignalStopOptions options, Env& env) : options_(std::move(options)) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  watcher_ = std::jthread([this, set, &env](std::stop_token own) {
    std::optional<Env::Instant> deadline;
    while (!own.stop_requested()) {
      timespec tick{0, 200'000'000};
      const bool signalled = sigtimedwait(&set, nullptr, &tick) > 0;
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
  });
}

SignalStop::~SignalStop() {
  watcher_.request_stop();
  watcher_.join();
}

}  // namespace tr
