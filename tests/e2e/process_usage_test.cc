// The benchmarks' reading of a process from /proc: its open TCP connections (idle_bench waits
// until the daemon holds none before it reads the idle memory).
#include "tests/support/e2e/process_usage.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace tr::e2e {
namespace {

// A file descriptor closed when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

TEST(ProcessUsageTest, CountsOpenConnectionsButNotAListeningSocket) {
  auto before = CountOpenConnections(::getpid());
  ASSERT_TRUE(before.ok()) << before.status();

  Fd listener{::socket(AF_INET, SOCK_STREAM, 0)};
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  auto* any = reinterpret_cast<sockaddr*>(&address);
  ASSERT_EQ(::bind(listener.fd, any, length), 0);
  ASSERT_EQ(::listen(listener.fd, 1), 0);
  ASSERT_EQ(::getsockname(listener.fd, any, &length), 0);
  EXPECT_EQ(*CountOpenConnections(::getpid()), *before) << "a listening socket is no connection";

  {
    Fd client{::socket(AF_INET, SOCK_STREAM, 0)};
    ASSERT_EQ(::connect(client.fd, any, length), 0);
    Fd server{::accept(listener.fd, nullptr, nullptr)};
    ASSERT_GE(server.fd, 0);
    // Both ends of the loopback connection are this process's.
    EXPECT_EQ(*CountOpenConnections(::getpid()), *before + 2);
  }
  EXPECT_EQ(*CountOpenConnections(::getpid()), *before);
}

TEST(ProcessUsageTest, AProcessThatIsGoneIsNotFound) {
  // Pid numbers stop well below this (pid_max is at most 2^22).
  EXPECT_EQ(CountOpenConnections(1 << 23).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tr::e2e
