// The environment: the one jittered backoff, the spread of periodic work, the real sleep's
// stop, timed waits (real and simulated), and the walls around it: who may name the real one.
#include "base/env.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "tests/support/simulated_env.h"

namespace tr {
namespace {

using std::chrono::milliseconds;
using tr::test_support::SimulatedEnv;

SimulatedEnv Fixed(double value) {
  SimulatedEnv env;
  env.uniforms = {value};
  return env;
}

TEST(EnvTest, BackoffDoublesPerRetryUpToTheCapWithHalfJitter) {
  const BackoffPolicy policy{milliseconds(100), milliseconds(1000), 10};
  SimulatedEnv none = Fixed(0.0), all = Fixed(0.999999), half = Fixed(0.5);
  EXPECT_EQ(JitteredBackoff(policy, 1, none), milliseconds(50));
  EXPECT_EQ(JitteredBackoff(policy, 1, half), milliseconds(75));
  EXPECT_EQ(JitteredBackoff(policy, 2, none), milliseconds(100));
  EXPECT_EQ(JitteredBackoff(policy, 3, none), milliseconds(200));
  EXPECT_EQ(JitteredBackoff(policy, 4, all), milliseconds(799));
  EXPECT_EQ(JitteredBackoff(policy, 5, none), milliseconds(500));
  EXPECT_EQ(JitteredBackoff(policy, 60, none), milliseconds(500));
  EXPECT_EQ(JitteredBackoff(policy, 60, all), milliseconds(999));
}

TEST(EnvTest, SpreadKeepsTheMeanWithinTheBounds) {
  SimulatedEnv low = Fixed(0.0), mid = Fixed(0.5), high = Fixed(0.999999);
  EXPECT_EQ(Spread(milliseconds(1000), 0.1, low), milliseconds(900));
  EXPECT_EQ(Spread(milliseconds(1000), 0.1, mid), milliseconds(1000));
  EXPECT_EQ(Spread(milliseconds(1000), 0.1, high), milliseconds(1100));
  EXPECT_EQ(Spread(milliseconds(1000), 0.0, high), milliseconds(1000));
  EXPECT_EQ(Spread(milliseconds(1000), 7.0, low), milliseconds(0));  // spread clamped to 1
}

TEST(EnvTest, RealSleepWakesWhenStopped) {
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(Env::Default().SleepFor(std::chrono::hours(1), stop.get_token()));
  EXPECT_TRUE(Env::Default().SleepFor(milliseconds(1), {}));
}

TEST(EnvTest, RealRandomnessIsInTheUnitInterval) {
  for (int i = 0; i < 1000; ++i) {
    const double u = Env::Default().Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(EnvTest, SimulatedSleepMovesTheClockAndEndsWithTheBudget) {
  SimulatedEnv env;
  const Env::TimePoint start = env.Now();
  env.sleep_budget = 2;
  EXPECT_TRUE(env.SleepFor(milliseconds(30), {}));
  EXPECT_FALSE(env.SleepFor(std::chrono::seconds(1), {}));
  EXPECT_EQ(env.Now() - start, milliseconds(1030));
  EXPECT_EQ(env.slept, (std::vector<milliseconds>{milliseconds(30), milliseconds(1000)}));
}

TEST(EnvTest, RealWaitEndsWhenReadyAtTheDeadlineOrWhenStopped) {
  Env& env = Env::Default();
  Mutex mu;
  std::condition_variable_any cv;
  MutexLock lock(mu);
  EXPECT_TRUE(env.WaitFor(cv, lock, {}, std::chrono::hours(1), [] { return true; }));
  EXPECT_FALSE(env.WaitFor(cv, lock, {}, milliseconds(1), [] { return false; }));
  EXPECT_FALSE(env.WaitFor(cv, lock, {}, -std::chrono::hours(1), [] { return false; }));
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(env.Wait(cv, lock, stop.get_token(), Env::kNoDeadline, [] { return false; }));
}

// A waiter in another thread wakes when the test moves the clock past its deadline, not
// before, and when its condition comes true; Settle tells when it waits again.
TEST(EnvTest, SimulatedWaitsEndAsTheTestMovesTime) {
  SimulatedEnv env;
  Mutex mu;
  std::condition_variable_any cv;
  bool ready = false;
  std::vector<bool> woke;  // what each wait returned
  std::jthread waiter([&] {
    MutexLock lock(mu);
    woke.push_back(env.WaitFor(cv, lock, {}, std::chrono::seconds(10), [&] { return ready; }));
    woke.push_back(env.Wait(cv, lock, {}, Env::kNoDeadline, [&] { return ready; }));
  });
  ASSERT_TRUE(env.Settle(1));
  env.Advance(std::chrono::seconds(9));
  ASSERT_TRUE(env.Settle(1));
  {
    MutexLock lock(mu);
    EXPECT_TRUE(woke.empty());  // a second short of the deadline
  }
  env.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(env.Settle(1));  // the first wait timed out; the second waits for `ready`
  {
    MutexLock lock(mu);
    EXPECT_EQ(woke, std::vector<bool>{false});
    ready = true;
    cv.notify_all();
  }
  waiter.join();
  EXPECT_EQ(woke, (std::vector<bool>{false, true}));
}

TEST(EnvTest, SimulatedSettleTimesOutWhenNobodyWaits) {
  SimulatedEnv env;
  EXPECT_TRUE(env.Settle(0, milliseconds(1)));
  EXPECT_FALSE(env.Settle(1, milliseconds(1)));
}

// A cheap filter before the patterns below: each of them needs one of these words. std::regex is
// slow enough (a minute over the tree under ASan) that running it on every line is not worth it.
bool MayNameAClockSleepOrRandomness(std::string_view code) {
  for (std::string_view word : {"now", "sleep", "rand", "absl::", "time"}) {
    if (code.find(word) != std::string_view::npos) return true;
  }
  return false;
}

// The one environment holds: outside its implementation, no code of base, core, gitsource,
// reconciler or the tests reads a clock, sleeps or draws from a random source of its own.
// Exempt: tests/sim, the simulator, which may use only core and proto and so keeps its own time
// model (tests/sim/common/scheduler.h, real or manual), and tests/bench, programs that measure real time.
TEST(EnvTest, NothingOutsideTheEnvironmentReadsAClockSleepsOrDrawsRandomness) {
  namespace fs = std::filesystem;
  const fs::path root = TR_SOURCE_DIR;
  const std::vector<std::pair<std::regex, std::string>> forbidden = {
      {std::regex(R"(\b\w*[Cc]lock::now\s*\()"), "reads a clock (Env::Now)"},
      {std::regex(R"(\bsleep_(for|until)\b)"), "sleeps (Env::SleepFor, test_support::WaitUntil)"},
      {std::regex(R"(\b(usleep|nanosleep|sleep)\s*\()"), "sleeps (Env::SleepFor)"},
      {std::regex(R"(\brandom_dev(ice)\b)"), "seeds randomness (Env::Uniform)"},
      {std::regex(R"(\bs?rand\s*\()"), "draws randomness (Env::Uniform)"},
      {std::regex(R"(\babsl::(Now|SleepFor)\b)"), "uses absl's clock (Env)"},
      {std::regex(R"(\btime\s*\(\s*(nullptr|NULL|0)\s*\))"), "reads a clock (Env::Now)"},
  };
  const std::set<fs::path> exempt = {root / "base/env.cc", root / "tests/sim",
                                     root / "tests/bench"};
  std::vector<std::string> offenders;
  int files = 0;
  for (const char* top : {"base", "core", "gitsource", "reconciler", "tests"}) {
    for (auto it = fs::recursive_directory_iterator(root / top); it != fs::end(it); ++it) {
      if (exempt.contains(it->path())) {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      const std::string ext = it->path().extension().string();
      if (!it->is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
      ++files;
      std::ifstream in(it->path());
      std::string line;
      for (int number = 1; std::getline(in, line); ++number) {
        const std::string code = line.substr(0, line.find("//"));  // comments may name them
        if (!MayNameAClockSleepOrRandomness(code)) continue;
        for (const auto& [pattern, what] : forbidden) {
          if (!std::regex_search(code, pattern)) continue;
          offenders.push_back(fmt::format("{}:{}: {}: {}", fs::relative(it->path(), root).string(),
                                          number, what, line));
        }
      }
    }
  }
  EXPECT_GT(files, 200);  // the walk found the tree
  EXPECT_TRUE(offenders.empty()) << "outside the environment:\n"
                                 << fmt::format("{}", fmt::join(offenders, "\n"));
}

// Below the composition root every object is handed its Env: only reconciler/app (the daemon,
// the CLI and its commands, main) names Env::Default(), and base/env.cc defines it. And no code
// of base, core, gitsource or reconciler waits with a timeout on the real clock: a timed wait
// for an event is Env::Wait/WaitFor, so it runs in simulated time under a test.
TEST(EnvTest, OnlyTheCompositionRootNamesTheRealEnvironmentAndNothingWaitsAroundIt) {
  namespace fs = std::filesystem;
  const fs::path root = TR_SOURCE_DIR;
  const std::regex real_env(R"(\bEnv::Default\s*\(\s*\))");
  const std::regex timed_wait(R"(\b(wait|sleep)_(for|until)\s*\()");
  const std::set<fs::path> real_env_allowed = {root / "base/env.cc", root / "base/env.h",
                                               root / "reconciler/app"};
  std::vector<std::string> offenders;
  int files = 0;
  for (const char* top : {"base", "core", "gitsource", "reconciler"}) {
    for (auto it = fs::recursive_directory_iterator(root / top); it != fs::end(it); ++it) {
      const std::string ext = it->path().extension().string();
      if (!it->is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
      ++files;
      const fs::path relative = fs::relative(it->path(), root);
      const bool may_name_default = std::any_of(
          real_env_allowed.begin(), real_env_allowed.end(), [&](const fs::path& allowed) {
            const std::string a = allowed.string(), p = it->path().string();
            return p == a || p.starts_with(a + "/");
          });
      const bool may_wait = it->path() == root / "base/env.cc";
      std::ifstream in(it->path());
      std::string line;
      for (int number = 1; std::getline(in, line); ++number) {
        const std::string code = line.substr(0, line.find("//"));  // comments may name them
        if (!may_name_default && code.find("Default") != std::string::npos &&
            std::regex_search(code, real_env)) {
          offenders.push_back(
              fmt::format("{}:{}: names Env::Default() below the composition "
                          "root (take an Env&): {}",
                          relative.string(), number, line));
        }
        if (!may_wait &&
            (code.find("wait_") != std::string::npos || code.find("sleep_") != std::string::npos) &&
            std::regex_search(code, timed_wait)) {
          offenders.push_back(
              fmt::format("{}:{}: waits on the real clock (Env::Wait/WaitFor/SleepFor): {}",
                          relative.string(), number, line));
        }
      }
    }
  }
  EXPECT_GT(files, 200);  // the walk found the tree
  EXPECT_TRUE(offenders.empty()) << "around the environment:\n"
                                 << fmt::format("{}", fmt::join(offenders, "\n"));
}

}  // namespace
}  // namespace tr
