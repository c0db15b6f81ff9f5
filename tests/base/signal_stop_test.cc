// SignalStop in a child process of its own (it blocks SIGTERM in every thread it starts and
// exits the process at once): the first signal asks everything to stop, and the exit that
// follows says why it came — a second signal, or the grace period over.
#include "base/signal_stop.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

namespace tr {
namespace {

// One byte written by the child: 'r' ready, 's' stopping, '2' second signal, 'g' grace over.
void Say(int fd, char what) {
  if (write(fd, &what, 1) != 1) std::_Exit(90);
}

char Hear(int fd) {
  char what = 0;
  return read(fd, &what, 1) == 1 ? what : '?';
}

struct Child {
  pid_t pid = -1;
  int from_child = -1;
};

// Starts a child that holds a SignalStop with `grace` and waits to be ended by it.
Child StartChild(std::optional<std::chrono::seconds> grace) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const int to_parent = fds[1];
    SignalStop stop({.exit_code = 7,
                     .grace = grace,
                     .on_stop = [to_parent] { Say(to_parent, 's'); },
                     .on_exit =
                         [to_parent](ForcedExit why) {
                           Say(to_parent, why == ForcedExit::kSecondSignal ? '2' : 'g');
                         }},
                    Env::Default());
    Say(to_parent, 'r');
    pause();  // SIGTERM is blocked here: only SignalStop's exit ends the child
    std::_Exit(91);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

int ExitCode(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(SignalStopTest, ASecondSignalExitsAtOnceAndSaysSo) {
  Child child = StartChild(std::chrono::seconds(3600));
  ASSERT_GT(child.pid, 0);
  ASSERT_EQ(Hear(child.from_child), 'r');
  kill(child.pid, SIGTERM);
  ASSERT_EQ(Hear(child.from_child), 's');
  kill(child.pid, SIGTERM);
  EXPECT_EQ(Hear(child.from_child), '2');
  EXPECT_EQ(ExitCode(child.pid), 7);
  close(child.from_child);
}

TEST(SignalStopTest, TheGracePeriodOverExitsAndSaysSo) {
  Child child = StartChild(std::chrono::seconds(0));
  ASSERT_GT(child.pid, 0);
  ASSERT_EQ(Hear(child.from_child), 'r');
  kill(child.pid, SIGTERM);
  ASSERT_EQ(Hear(child.from_child), 's');
  EXPECT_EQ(Hear(child.from_child), 'g');
  EXPECT_EQ(ExitCode(child.pid), 7);
  close(child.from_child);
}

// Its thread sleeps until a signal comes; the destructor wakes it, so a command that ends
// without a signal (upgrade-k8s done) does not hang on it, and nothing exits the process.
TEST(SignalStopTest, DestroyedWithoutASignalItEndsAndTheProcessGoesOn) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    {
      SignalStopOptions options;
      options.exit_code = 7;
      SignalStop stop(std::move(options), Env::Default());
      Say(fds[1], stop.token().stop_requested() ? 's' : 'r');
    }
    Say(fds[1], 'd');
    std::_Exit(0);
  }
  ASSERT_GT(pid, 0);
  close(fds[1]);
  EXPECT_EQ(Hear(fds[0]), 'r');
  EXPECT_EQ(Hear(fds[0]), 'd');
  EXPECT_EQ(ExitCode(pid), 0);
  close(fds[0]);
}

}  // namespace
}  // namespace tr
