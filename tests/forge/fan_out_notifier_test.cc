// Several notification sinks (StartNotifier's FanOutNotifier): each receiver has its own spool
// and retries, so one that is down holds up only its own deliveries, which it gets once back,
// also across a restart; real HTTP receivers on loopback.
#include "reconciler/features/notify/fan_out_notifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <stdexcept>

#include "nlohmann/json.hpp"
#include "reconciler/features/notify/notifier_factory.h"
#include "tests/forge/notify_receiver.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler::notify {
namespace {

namespace fs = std::filesystem;
using forge_test::Receiver;
using ::testing::HasSubstr;

Notification Started() {
  Notification n;
  n.event = NotificationEvent::kRolloutStarted;
  n.cluster = "prod-eu-1";
  n.phase = "UpgradingTalos";
  n.talos_target = "1.12.0";
  return n;
}

// Slack entries: no secret file needed.
std::string Entry(const Receiver& receiver) { return "url=" + receiver.Url() + ",format=slack"; }

class FanOutNotifierTest : public testing::Test {
 protected:
  void SetUp() override {
    const std::string test = testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::temp_directory_path() / ("tr-fan-out-" + std::to_string(::getpid()) + "-" + test);
    fs::remove_all(dir_);
    options_.spool_dir = dir_ / "notifications";
    options_.first_retry = std::chrono::milliseconds(20);
    options_.max_retry = std::chrono::milliseconds(100);
    options_.max_attempts = 1000;  // a receiver that is down stays spooled for the test
    options_.timeout = std::chrono::seconds(5);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<Notifier> Start(std::vector<std::string> entries) {
    auto notifier = StartNotifier(NotifyFlags{std::move(entries)}, options_, metrics_, env_);
    EXPECT_TRUE(notifier.ok()) << notifier.status();
    return notifier.ok() ? *std::move(notifier) : nullptr;
  }

  // Deliveries in the receiver's spool (a rewrite's .tmp file is not one).
  size_t Spooled(const Receiver& receiver) {
    const fs::path spool = options_.spool_dir / ParseNotifyTarget(Entry(receiver))->key;
    size_t files = 0;
    std::error_code ec;
    for (auto it = fs::directory_iterator(spool, ec); it != fs::directory_iterator(); ++it) {
      files += it->path().extension() == ".json";
    }
    return files;
  }

  fs::path dir_;
  WebhookNotifierOptions options_;
  Metrics metrics_;
  // Simulated time from the real moment (receivers check the signed timestamps against theirs):
  // each test moves it to the sender's retries and paces with RunTimersUntil.
  test_support::SimulatedEnv env_{Env::Default().Now()};
};

TEST_F(FanOutNotifierTest, OneReceiverDownTheOtherStillGetsItAndTheDownOneOnceBack) {
  std::atomic<bool> back{false};
  Receiver up([](int) { return 204; });
  Receiver down([&](int) { return back ? 200 : 503; });
  auto notifier = Start({Entry(up), Entry(down)});
  notifier->Notify(Started());
  ASSERT_TRUE(env_.RunTimersUntil(2, [&] { return Spooled(up) == 0 && down.Got().size() >= 2; }));
  EXPECT_EQ(up.Got().size(), 1u);
  EXPECT_EQ(metrics_.notifications.Value("sent"), 1u);
  EXPECT_EQ(Spooled(down), 1u);  // kept until the receiver takes it
  back = true;
  ASSERT_TRUE(env_.RunTimersUntil(2, [&] { return Spooled(down) == 0; }));
  EXPECT_EQ(metrics_.notifications.Value("sent"), 2u);
  const auto got = down.Got();
  EXPECT_EQ(got.front().delivery, got.back().delivery);  // one delivery, retried
  EXPECT_THAT(nlohmann::json::parse(got.back().body)["text"].get<std::string>(),
              HasSubstr("*prod-eu-1* rollout.started"));
  EXPECT_EQ(up.Got().size(), 1u);
}

TEST_F(FanOutNotifierTest, WhatADownReceiverMissedIsSentAfterARestartAndOnlyToIt) {
  std::atomic<bool> back{false};
  Receiver up([](int) { return 204; });
  Receiver down([&](int) { return back ? 200 : 503; });
  options_.first_retry = std::chrono::minutes(10);  // nothing is retried before the restart
  {
    auto notifier = Start({Entry(up), Entry(down)});
    notifier->Notify(Started());
    ASSERT_TRUE(env_.RunTimersUntil(2, [&] { return Spooled(up) == 0 && down.Got().size() == 1; }));
  }
  back = true;
  options_.first_retry = std::chrono::milliseconds(20);
  auto restarted = Start({Entry(up), Entry(down)});
  ASSERT_TRUE(env_.RunTimersUntil(2, [&] { return down.Got().size() == 2; }));
  EXPECT_EQ(down.Got()[0].delivery, down.Got()[1].delivery);
  ASSERT_TRUE(env_.RunTimersUntil(2, [&] { return Spooled(down) == 0; }));
  EXPECT_EQ(up.Got().size(), 1u);  // it had its delivery already
}

TEST_F(FanOutNotifierTest, TheSpoolOfAReceiverNoLongerConfiguredIsDeleted) {
  Receiver kept([](int) { return 204; });
  Receiver dropped([](int) { return 503; });
  options_.first_retry = std::chrono::minutes(10);
  {
    auto notifier = Start({Entry(kept), Entry(dropped)});
    notifier->Notify(Started());
    ASSERT_TRUE(env_.RunTimersUntil(2, [&] { return dropped.Got().size() == 1; }));
  }
  const fs::path spool = options_.spool_dir / ParseNotifyTarget(Entry(dropped))->key;
  ASSERT_TRUE(fs::exists(spool));
  auto restarted = Start({Entry(kept)});
  EXPECT_FALSE(fs::exists(spool));
  EXPECT_TRUE(fs::exists(options_.spool_dir / ParseNotifyTarget(Entry(kept))->key));
}

// A sink that breaks its contract and throws.
class ThrowingSink final : public Notifier {
 public:
  void Notify(const Notification&) override { throw std::runtime_error("broken sink"); }
};

class CountingSink final : public Notifier {
 public:
  explicit CountingSink(std::atomic<int>& count) : count_(count) {}
  void Notify(const Notification&) override { ++count_; }

 private:
  std::atomic<int>& count_;
};

TEST(FanOutNotifierContractTest, ASinkThatThrowsDoesNotKeepTheOthersFromIt) {
  std::atomic<int> count{0};
  std::vector<std::unique_ptr<Notifier>> sinks;
  sinks.push_back(std::make_unique<CountingSink>(count));
  sinks.push_back(std::make_unique<ThrowingSink>());
  sinks.push_back(std::make_unique<CountingSink>(count));
  FanOutNotifier notifier(std::move(sinks));
  notifier.Notify(Started());
  notifier.Notify(Started());
  EXPECT_EQ(count.load(), 4);
}

}  // namespace
}  // namespace tr::reconciler::notify
