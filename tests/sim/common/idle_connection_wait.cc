#include "tests/sim/common/idle_connection_wait.h"

#include <poll.h>

#include <cerrno>
#include <chrono>

namespace tr::sim {

bool WaitForNextRequest(int fd, time_t timeout_seconds) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::seconds(timeout_seconds);
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd watched{.fd = fd, .events = POLLIN, .revents = 0};
    const int ready = poll(&watched, 1, left > 0 ? static_cast<int>(left) : 0);
    if (ready > 0) return true;  // data, or the peer hung up: the server's read tells which
    if (ready == 0) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace tr::sim
