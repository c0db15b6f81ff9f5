// IdleCloser: the memory kept by glibc is given back only after a sweep that closed connections
// while no client had a request in flight.
#include "reconciler/clients/kube/idle_closer.h"

#include <gtest/gtest.h>

#include <atomic>

#include "tests/support/wait.h"

namespace tr::reconciler::kube {
namespace {

using namespace std::chrono_literals;

// A client whose answer to the closer the test sets, counting the sweeps that asked it.
struct ScriptedIdleClient {
  std::atomic<IdleCloser::Idle> answer{IdleCloser::Idle::kIdle};
  std::atomic<int> asked{0};
  IdleCloser::Idle Ask() {
    ++asked;
    return answer.load();
  }
};

TEST(IdleCloserTest, GivesMemoryBackAfterClosingOnlyWhenNoRequestIsInFlight) {
  ScriptedIdleClient closing, busy;
  closing.answer = IdleCloser::Idle::kClosed;
  busy.answer = IdleCloser::Idle::kBusy;
  std::atomic<int> given_back{0};
  IdleCloser closer(Env::Default(), [&] { ++given_back; });
  // The busy one first: no sweep sees the closing one alone.
  const int b = closer.Add(2ms, [&](Env::TimePoint) { return busy.Ask(); });
  const int a = closer.Add(2ms, [&](Env::TimePoint) { return closing.Ask(); });
  ASSERT_TRUE(test_support::WaitUntil([&] { return busy.asked >= 3; }, 60s));
  EXPECT_EQ(given_back, 0) << "memory given back while a request was in flight";
  busy.answer = IdleCloser::Idle::kIdle;
  ASSERT_TRUE(test_support::WaitUntil([&] { return given_back >= 1; }, 60s))
      << "never given back once every client was idle";
  closer.Remove(a);
  closer.Remove(b);
}

}  // namespace
}  // namespace tr::reconciler::kube
