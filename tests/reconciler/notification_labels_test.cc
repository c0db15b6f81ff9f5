// Notifications carry the cluster's labels, as its status records them, so that a receiver (or a
// filter) can tell clusters apart by them. The rest of what a notification holds, and its
// delivery, is tested in tests/forge/notify_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "reconciler/features/notify/notification.h"

namespace tr::reconciler::notify {
namespace {

using ::testing::ElementsAre;

using Labels = std::map<std::string, std::string>;

core::ClusterStatus Status(core::ClusterPhase phase, Labels labels) {
  core::ClusterStatus s;
  s.cluster = "prod-eu-1";
  s.labels = std::move(labels);
  s.phase = phase;
  s.nodes = {{"cp-0", "controlplane", "1.11.6", "1.35.0", true, true, {}, "", {}}};
  return s;
}

std::vector<std::string> Events(const std::vector<Notification>& notifications) {
  std::vector<std::string> names;
  for (const Notification& n : notifications) names.push_back(NotificationEventName(n.event));
  return names;
}

TEST(NotificationLabelsTest, EveryEventCarriesTheLabelsOfTheNewStatus) {
  const Labels prod = {{"env", "prod"}, {"example.com/team", "payments"}};
  const core::ClusterStatus ready = Status(core::ClusterPhase::kReady, {{"env", "staging"}});
  core::ClusterStatus upgrading = Status(core::ClusterPhase::kUpgradingTalos, prod);
  upgrading.nodes[0].last_operation = "upgraded to Talos 1.12.0 in 6m12s";
  const core::ClusterStatus failed = Status(core::ClusterPhase::kUpgradeFailed, prod);

  // The labels of `next`, not of `previous`: a label changed with the rollout's commit counts.
  std::vector<Notification> started = NotificationsBetween(&ready, upgrading);
  ASSERT_THAT(Events(started), ElementsAre("rollout.started", "node.upgraded"));
  EXPECT_EQ(started[0].labels, prod);
  EXPECT_EQ(started[1].labels, prod);

  std::vector<Notification> halted = NotificationsBetween(&upgrading, failed);
  ASSERT_THAT(Events(halted), ElementsAre("rollout.failed"));
  EXPECT_EQ(halted[0].labels, prod);

  const core::ClusterStatus done = Status(core::ClusterPhase::kReady, prod);
  std::vector<Notification> completed = NotificationsBetween(&upgrading, done);
  ASSERT_THAT(Events(completed), ElementsAre("rollout.completed"));
  EXPECT_EQ(completed[0].labels, prod);
}

// Labels removed from the profile with the rollout's commit: the rollout is no longer theirs.
TEST(NotificationLabelsTest, AClusterWhoseLabelsWereRemovedNotifiesWithNone) {
  const core::ClusterStatus ready = Status(core::ClusterPhase::kReady, {{"env", "prod"}});
  const core::ClusterStatus upgrading = Status(core::ClusterPhase::kUpgradingTalos, {});
  std::vector<Notification> started = NotificationsBetween(&ready, upgrading);
  ASSERT_THAT(Events(started), ElementsAre("rollout.started"));
  EXPECT_TRUE(started[0].labels.empty());
}

// A profile broken mid-rollout blocks the cluster; the Blocked notification still goes to whoever
// its last valid labels named, since the status keeps them.
TEST(NotificationLabelsTest, ABrokenProfileIsReportedUnderTheLabelsItHadBefore) {
  const Labels prod = {{"env", "prod"}};
  const core::ClusterStatus upgrading = Status(core::ClusterPhase::kUpgradingTalos, prod);
  const core::Diagnostics problems = {
      {"clusters/prod-eu-1.yaml", 6, 10, "metadata.labels.env", "broken"}};
  core::StatusInput in;
  in.cluster = "prod-eu-1";
  in.previous = &upgrading;
  in.invalid = &problems;
  const core::ClusterStatus blocked = core::BuildClusterStatus(in);

  std::vector<Notification> notified = NotificationsBetween(&upgrading, blocked);
  ASSERT_THAT(Events(notified), ElementsAre("rollout.blocked"));
  EXPECT_EQ(notified[0].labels, prod);
}

}  // namespace
}  // namespace tr::reconciler::notify
