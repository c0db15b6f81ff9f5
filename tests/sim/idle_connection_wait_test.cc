#include "tests/sim/common/idle_connection_wait.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>

namespace tr::sim {
namespace {

class IdleConnectionWaitTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0); }
  void TearDown() override {
    for (int fd : fds_) {
      if (fd >= 0) close(fd);
    }
  }
  int server() const { return fds_[0]; }
  int client() const { return fds_[1]; }
  void CloseClient() {
    close(fds_[1]);
    fds_[1] = -1;
  }

 private:
  int fds_[2] = {-1, -1};
};

TEST_F(IdleConnectionWaitTest, ANextRequestEndsTheWait) {
  ASSERT_EQ(write(client(), "GET", 3), 3);
  EXPECT_TRUE(WaitForNextRequest(server(), 30));
}

TEST_F(IdleConnectionWaitTest, ARequestArrivingDuringTheWaitEndsIt) {
  auto waited = std::async(std::launch::async, [&] { return WaitForNextRequest(server(), 30); });
  ASSERT_EQ(write(client(), "GET", 3), 3);
  EXPECT_TRUE(waited.get());
}

TEST_F(IdleConnectionWaitTest, APeerThatHangsUpEndsTheWaitForTheServerToReadTheEnd) {
  CloseClient();
  EXPECT_TRUE(WaitForNextRequest(server(), 30));
}

TEST_F(IdleConnectionWaitTest, NoTimeLeftAndNothingToReadIsATimeout) {
  EXPECT_FALSE(WaitForNextRequest(server(), 0));
}

TEST_F(IdleConnectionWaitTest, AnIdleConnectionTimesOutAfterSleepingOnceNotPolling) {
  // httplib's own wait woke ~90 times a second; this one blocks in one poll until the timeout.
  rusage before{}, after{};
  ASSERT_EQ(getrusage(RUSAGE_THREAD, &before), 0);
  EXPECT_FALSE(WaitForNextRequest(server(), 1));
  ASSERT_EQ(getrusage(RUSAGE_THREAD, &after), 0);
  EXPECT_LE(after.ru_nvcsw - before.ru_nvcsw, 2);
}

}  // namespace
}  // namespace tr::sim
