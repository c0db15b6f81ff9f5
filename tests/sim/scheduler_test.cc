#include "tests/sim/common/scheduler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>

#include "nlohmann/json.hpp"
#include "tests/sim/common/ids.h"
#include "tests/sim/common/journal.h"

namespace tr::sim {
namespace {

using ::testing::ElementsAre;
using namespace std::chrono_literals;

TEST(ManualSchedulerTest, RunsTasksInTimeOrderWithNowAtTheDueTime) {
  ManualScheduler clock;
  std::vector<std::string> ran;
  const auto start = clock.Now();
  clock.After(20ms, [&] { ran.push_back("b@" + std::to_string((clock.Now() - start) / 1ms)); });
  clock.After(10ms, [&] {
    ran.push_back("a@" + std::to_string((clock.Now() - start) / 1ms));
    clock.After(5ms,
                [&] { ran.push_back("nested@" + std::to_string((clock.Now() - start) / 1ms)); });
  });
  clock.After(10ms, [&] { ran.push_back("a2"); });
  clock.AdvanceBy(12ms);
  EXPECT_THAT(ran, ElementsAre("a@10", "a2"));
  clock.AdvanceBy(100ms);
  EXPECT_THAT(ran, ElementsAre("a@10", "a2", "nested@15", "b@20"));
  EXPECT_EQ(clock.Now() - start, 112ms);
  EXPECT_EQ(clock.Pending(), 0u);
  clock.Stop();
  clock.After(0ms, [&] { ran.push_back("dropped"); });
  clock.RunDue();
  EXPECT_EQ(ran.size(), 4u);
}

TEST(RealSchedulerTest, RunsTasksOnItsThread) {
  RealScheduler scheduler;
  std::promise<int> done;
  scheduler.After(1ms, [&] { done.set_value(42); });
  auto future = done.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(future.get(), 42);
  scheduler.Stop();
}

TEST(IdsTest, UuidAndXidShapes) {
  const std::string uuid = NewUuid();
  ASSERT_EQ(uuid.size(), 36u);
  EXPECT_EQ(uuid[14], '4');
  EXPECT_NE(NewUuid(), uuid);
  const auto now = std::chrono::system_clock::now();
  const std::string a = NewXid(now), b = NewXid(now), later = NewXid(now + 5s);
  EXPECT_EQ(a.size(), 20u);
  EXPECT_LT(a, b);
  EXPECT_LT(b, later);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdefghijklmnopqrstuv"), std::string::npos);
}

TEST(JournalTest, WaitForSeesEntriesFromOtherThreads) {
  Journal journal;
  std::thread writer([&] {
    JournalEntry e;
    e.node = "cp-1";
    e.what = "up";
    journal.Record(e, std::chrono::system_clock::now());
  });
  auto st = journal.WaitFor([](const auto& entries) { return entries.size() == 1; }, 10s);
  writer.join();
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(journal.Entries()[0].seq, 1u);
  EXPECT_EQ(journal.Entries()[0].ToJson()["kind"], "call");
  JournalEntry stamped;
  stamped.time =
      std::chrono::system_clock::time_point(std::chrono::microseconds(1'780'000'000'123'456));
  EXPECT_EQ(stamped.ToJson()["time"], "2026-05-28T20:26:40.123456Z");
  auto timeout = journal.WaitFor([](const auto& entries) { return entries.size() == 2; }, 1ms);
  EXPECT_EQ(timeout.code(), absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace tr::sim
