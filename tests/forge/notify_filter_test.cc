// Which notifications a receiver gets: the filter keys of --notify (event, cluster, label,
// min-severity), each alone and together, parsed from an entry as the daemon does, and a
// filtered receiver that gets what passes and nothing else.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reconciler/features/notify/notify_filter.h"
#include "reconciler/features/notify/notify_target.h"

namespace tr::reconciler::notify {
namespace {

using ::testing::HasSubstr;

Notification Event(NotificationEvent event, const std::string& cluster,
                   std::map<std::string, std::string> labels = {}) {
  Notification n;
  n.event = event;
  n.cluster = cluster;
  n.labels = std::move(labels);
  return n;
}

NotifyFilter FilterOf(const std::string& keys) {
  auto target = ParseNotifyTarget("url=https://hooks.example.test/x,format=slack," + keys);
  EXPECT_TRUE(target.ok()) << target.status();
  return target.ok() ? target->filter : NotifyFilter{};
}

TEST(MatchesPatternTest, StarStandsForAnyRunOfCharacters) {
  EXPECT_TRUE(MatchesPattern("prod-eu-1", "prod-eu-1"));
  EXPECT_FALSE(MatchesPattern("prod-eu-1", "prod-eu-10"));
  EXPECT_TRUE(MatchesPattern("prod-*", "prod-eu-1"));
  EXPECT_TRUE(MatchesPattern("prod-*", "prod-"));
  EXPECT_FALSE(MatchesPattern("prod-*", "staging-eu-1"));
  EXPECT_TRUE(MatchesPattern("*-eu-*", "prod-eu-1"));
  EXPECT_FALSE(MatchesPattern("*-eu-*", "prod-us-1"));
  EXPECT_TRUE(MatchesPattern("*", ""));
  EXPECT_TRUE(MatchesPattern("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(MatchesPattern("a*b*c", "aXbYbZ"));
}

TEST(NotifyFilterTest, NoKeyLetsEverythingThrough) {
  const NotifyFilter all = FilterOf("format=slack");
  for (auto e : {NotificationEvent::kRolloutStarted, NotificationEvent::kNodeUpgraded,
                 NotificationEvent::kRolloutFailed, NotificationEvent::kWaitingForGate}) {
    EXPECT_TRUE(all.Accepts(Event(e, "any"))) << NotificationEventName(e);
  }
}

TEST(NotifyFilterTest, EventsAreAlternatives) {
  const NotifyFilter f = FilterOf("event=rollout.failed,event=rollout.completed");
  EXPECT_TRUE(f.Accepts(Event(NotificationEvent::kRolloutFailed, "a")));
  EXPECT_TRUE(f.Accepts(Event(NotificationEvent::kRolloutCompleted, "a")));
  EXPECT_FALSE(f.Accepts(Event(NotificationEvent::kRolloutStarted, "a")));
  EXPECT_FALSE(f.Accepts(Event(NotificationEvent::kNodeUpgraded, "a")));
}

TEST(NotifyFilterTest, ClusterPatternsAreAlternatives) {
  const NotifyFilter f = FilterOf("cluster=prod-*,cluster=lab");
  EXPECT_TRUE(f.Accepts(Event(NotificationEvent::kRolloutStarted, "prod-eu-1")));
  EXPECT_TRUE(f.Accepts(Event(NotificationEvent::kRolloutStarted, "lab")));
  EXPECT_FALSE(f.Accepts(Event(NotificationEvent::kRolloutStarted, "lab-2")));
  EXPECT_FALSE(f.Accepts(Event(NotificationEvent::kRolloutStarted, "staging")));
}

TEST(NotifyFilterTest, EveryLabelMustBeTheClusters) {
  const NotifyFilter f = FilterOf("label=env=prod,label=team=storage");
  EXPECT_TRUE(f.Accepts(Event(NotificationEvent::kRolloutStarted, "a",
                              {{"env", "prod"}, {"team", "storage"}, {"region", "eu"}})));
  EXPECT_FALSE(f.Accepts(Event(NotificationEvent::kRolloutStarted, "a", {{"env", "prod"}})));
  EXPECT_FALSE(f.Accepts(
      Event(NotificationEvent::kRolloutStarted, "a", {{"env", "staging"}, {"team", "storage"}})));
  EXPECT_FALSE(f.Accepts(Event(NotificationEvent::kRolloutStarted, "a")));
}

TEST(NotifyFilterTest, MinimumSeverity) {
  const NotifyFilter warnings = FilterOf("min-severity=warning");
  EXPECT_FALSE(warnings.Accepts(Event(NotificationEvent::kRolloutStarted, "a")));
  EXPECT_FALSE(warnings.Accepts(Event(NotificationEvent::kRolloutCompleted, "a")));
  EXPECT_TRUE(warnings.Accepts(Event(NotificationEvent::kRolloutBlocked, "a")));
  EXPECT_TRUE(warnings.Accepts(Event(NotificationEvent::kWaitingForGate, "a")));
  EXPECT_TRUE(warnings.Accepts(Event(NotificationEvent::kRolloutFailed, "a")));
  const NotifyFilter errors = FilterOf("min-severity=error");
  EXPECT_FALSE(errors.Accepts(Event(NotificationEvent::kRolloutBlocked, "a")));
  EXPECT_TRUE(errors.Accepts(Event(NotificationEvent::kRolloutFailed, "a")));
}

TEST(NotifyFilterTest, KindsMustAllHold) {
  const NotifyFilter f = FilterOf("cluster=prod-*,min-severity=error,label=env=prod");
  EXPECT_TRUE(f.Accepts(Event(NotificationEvent::kRolloutFailed, "prod-1", {{"env", "prod"}})));
  EXPECT_FALSE(f.Accepts(Event(NotificationEvent::kRolloutFailed, "lab-1", {{"env", "prod"}})));
  EXPECT_FALSE(f.Accepts(Event(NotificationEvent::kRolloutStarted, "prod-1", {{"env", "prod"}})));
  EXPECT_FALSE(f.Accepts(Event(NotificationEvent::kRolloutFailed, "prod-1", {{"env", "lab"}})));
}

TEST(NotifyFilterTest, BadValuesAreRefusedSayingWhatIsAllowed) {
  const struct {
    std::string keys, says;
  } cases[] = {
      {"event=rollout.exploded", "rollout.started, node.upgraded"},
      {"min-severity=critical", "info, warning or error"},
      {"label=env", "key=value"},
      {"label==prod", "key=value"},
      {"cluster=", "prod-*"},
  };
  for (const auto& c : cases) {
    const absl::Status s =
        ParseNotifyTarget("url=https://hooks.example.test/x,format=slack," + c.keys).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.keys;
    EXPECT_THAT(s.message(), HasSubstr(c.says)) << c.keys;
  }
}

}  // namespace
}  // namespace tr::reconciler::notify
