// IdleCloser: the memory kept by glibc is given back only after a sweep that closed connections
// while no client had a request in flight.
#include "reconciler/clients/kube/idle_closer.h"

#include <gtest/gtest.h>

#include <atomic>

#include "tests/support/simulated_env.h"

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
  test_support::SimulatedEnv env;  // the sweeps come as the test moves the clock
  IdleCloser closer(env, [&] { ++given_back; });
  // The busy one first: no sweep sees the closing one alone.
  const int b = closer.Add(2ms, [&](Env::TimePoint) { return busy.Ask(); });
  const int a = closer.Add(2ms, [&](Env::TimePoint) { return closing.Ask(); });
  ASSERT_TRUE(env.RunTimersUntil(1, [&] { return busy.asked >= 3; }));
  EXPECT_EQ(given_back, 0) << "memory given back while a request was in flight";
  busy.answer = IdleCloser::Idle::kIdle;
  ASSERT_TRUE(env.RunTimersUntil(1, [&] { return given_back >= 1; }))
      << "never given back once every client was idle";
  closer.Remove(a);
  closer.Remove(b);
}

}  // namespace
}  // namespace tr::reconciler::kube
