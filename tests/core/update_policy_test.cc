#include "core/update_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/profile_set.h"
#include "core/repository_defaults_decode.h"
#include "tests/core/diagnostic_strings.h"

namespace tr::core {
namespace {

using std::chrono::hours;
using std::chrono::seconds;
using testing::ElementsAre;
using testing::HasSubstr;

Version V(std::string_view text) { return *ParseKubernetesVersion(text); }

TEST(VersionMatcherTest, ExactMinorAndComparators) {
  const VersionMatcher exact = *VersionMatcher::Parse("1.12.3");
  EXPECT_TRUE(exact.Matches(V("1.12.3")));
  EXPECT_FALSE(exact.Matches(V("1.12.4")));
  const VersionMatcher minor = *VersionMatcher::Parse("1.13.x");
  EXPECT_TRUE(minor.Matches(V("1.13.0")));
  EXPECT_TRUE(minor.Matches(V("1.13.9")));
  EXPECT_FALSE(minor.Matches(V("1.14.0")));
  EXPECT_FALSE(minor.Matches(V("1.12.9")));
  const VersionMatcher range = *VersionMatcher::Parse(">=1.13.0 <1.13.4");
  EXPECT_TRUE(range.Matches(V("1.13.3")));
  EXPECT_FALSE(range.Matches(V("1.13.4")));
  EXPECT_TRUE(VersionMatcher::Parse(">1.13.0")->Matches(V("1.13.1")));
  EXPECT_FALSE(VersionMatcher::Parse("<=1.13.0")->Matches(V("1.13.1")));
  for (std::string_view bad : {"", "1.13", "latest", ">=", "1.x.x", ">=1.13.0 nonsense"}) {
    EXPECT_FALSE(VersionMatcher::Parse(bad).ok()) << bad;
  }
}

LocalMinute At(int weekday, int hour, int minute, int day = 15, int month = 6) {
  return {.minute = minute, .hour = hour, .day_of_month = day, .month = month, .weekday = weekday};
}

TEST(CronScheduleTest, FieldsListsRangesAndSteps) {
  const CronSchedule weekdays = *CronSchedule::Parse("0 6 * * 1-5");
  EXPECT_TRUE(weekdays.Matches(At(1, 6, 0)));
  EXPECT_FALSE(weekdays.Matches(At(0, 6, 0)));
  EXPECT_FALSE(weekdays.Matches(At(1, 6, 1)));
  const CronSchedule steps = *CronSchedule::Parse("*/15 9,17 * * *");
  EXPECT_TRUE(steps.Matches(At(3, 17, 45)));
  EXPECT_FALSE(steps.Matches(At(3, 17, 44)));
  EXPECT_TRUE(CronSchedule::Parse("0 0 * * 7")->Matches(At(0, 0, 0)));  // 7 is Sunday
  // Both day fields restricted: either matches, as in cron.
  const CronSchedule either = *CronSchedule::Parse("0 0 1 * 1");
  EXPECT_TRUE(either.Matches(At(1, 0, 0, 10)));
  EXPECT_TRUE(either.Matches(At(4, 0, 0, 1)));
  EXPECT_FALSE(either.Matches(At(4, 0, 0, 2)));
  for (std::string_view bad : {"0 6 * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "5-1 * * * *",
                               "*/0 * * * *", "a * * * *", "* * * 13 *", "* * * * 8"}) {
    EXPECT_FALSE(CronSchedule::Parse(bad).ok()) << bad;
  }
}

TEST(ReleaseAgeTest, DaysAndDurations) {
  EXPECT_EQ(*ParseReleaseAge("7d"), hours(24 * 7));
  EXPECT_EQ(*ParseReleaseAge("1d12h"), hours(36));
  EXPECT_EQ(*ParseReleaseAge("36h"), hours(36));
  EXPECT_EQ(*ParseReleaseAge("0s"), seconds(0));
  for (std::string_view bad : {"7", "d", "-1d", "1.5d", "1d1d", "7days", "1w"}) {
    EXPECT_FALSE(ParseReleaseAge(bad).ok()) << bad;
  }
}

std::vector<std::string> DefaultsProblems(std::string_view updates) {
  const std::string content = std::string(R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: RepositoryDefaults
updates:
)") + std::string(updates);
  Decoded<RepositoryDefaults> decoded = DecodeRepositoryDefaults("reconciler.yaml", content);
  return DiagnosticStrings(decoded.diagnostics);
}

TEST(UpdatePolicyDecodeTest, ReadsEveryKey) {
  const std::string content = R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: RepositoryDefaults
updates:
  talos: minor
  kubernetes: patch
  schedule: {cron: "0 6 * * 1", timeZone: Europe/Berlin}
  ignore: [1.12.3, 1.13.x]
  minimumReleaseAge: 7d
  group: fleet
)";
  Decoded<RepositoryDefaults> decoded = DecodeRepositoryDefaults("reconciler.yaml", content);
  ASSERT_TRUE(decoded.ok()) << testing::PrintToString(DiagnosticStrings(decoded.diagnostics));
  const UpdatePolicy policy = MergeUpdatePolicy({}, decoded.value->updates);
  EXPECT_EQ(policy.talos, UpdateLevel::kMinor);
  EXPECT_EQ(policy.kubernetes, UpdateLevel::kPatch);
  ASSERT_TRUE(policy.schedule.has_value());
  EXPECT_EQ(policy.schedule->cron.text(), "0 6 * * 1");
  EXPECT_EQ(policy.schedule->timezone, "Europe/Berlin");
  ASSERT_EQ(policy.ignore.size(), 2u);
  EXPECT_TRUE(IsIgnored(policy, V("1.13.7")));
  EXPECT_FALSE(IsIgnored(policy, V("1.12.4")));
  EXPECT_EQ(policy.minimum_release_age, hours(24 * 7));
  EXPECT_EQ(policy.group, "fleet");
}

TEST(UpdatePolicyDecodeTest, EveryProblemIsReportedWhereItIs) {
  EXPECT_THAT(DefaultsProblems("  talos: major\n"),
              ElementsAre(HasSubstr("updates.talos: must be none, patch or minor")));
  EXPECT_THAT(DefaultsProblems("  schedule: {cron: \"0 6 * *\"}\n"),
              ElementsAre(HasSubstr("updates.schedule.cron: \"0 6 * *\": a cron expression has "
                                    "five fields")));
  EXPECT_THAT(DefaultsProblems("  schedule: {timeZone: UTC}\n"), ElementsAre(HasSubstr("cron")));
  EXPECT_THAT(DefaultsProblems("  ignore: [latest]\n"),
              ElementsAre(HasSubstr("updates.ignore[0]: \"latest\"")));
  EXPECT_THAT(DefaultsProblems("  minimumReleaseAge: 1w\n"),
              ElementsAre(HasSubstr("updates.minimumReleaseAge")));
  EXPECT_THAT(DefaultsProblems("  group: Not_A_Label\n"), ElementsAre(HasSubstr("updates.group")));
  EXPECT_THAT(DefaultsProblems("  talos: patch\n  schedul: {}\n"),
              ElementsAre(HasSubstr("did you mean")));
  EXPECT_EQ(DefaultsProblems("  talos: major\n  kubernetes: every\n").size(), 2u);
}

TEST(UpdatePolicyDecodeTest, AProfileOverridesTheRepositoryPolicyKeyByKey) {
  const std::vector<SourceFile> files = {
      {.path = "reconciler.yaml",
       .content = "apiVersion: talos-reconciler.dev/v1alpha1\nkind: RepositoryDefaults\n"
                  "updates: {talos: minor, kubernetes: patch, minimumReleaseAge: 2d}\n",
       .oversized = false},
      {.path = "clusters/prod.yaml",
       .content = R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: ClusterProfile
metadata: {name: prod}
spec:
  endpoints: [10.0.0.11]
  credentials: prod
  talos: {version: 1.12.0, image: ghcr.io/siderolabs/installer}
  kubernetes: {version: 1.34.1}
  nodes:
    - {name: cp-0, address: 10.0.0.11, role: controlplane}
  updates: {talos: patch, ignore: [1.12.9]}
)",
       .oversized = false}};
  const ProfileSet set = DecodeProfileSet(files);
  ASSERT_EQ(set.profiles.size(), 1u);
  const UpdatePolicy& policy = set.profiles[0].updates;
  EXPECT_EQ(policy.talos, UpdateLevel::kPatch);
  EXPECT_EQ(policy.kubernetes, UpdateLevel::kPatch);
  EXPECT_EQ(policy.minimum_release_age, hours(48));
  EXPECT_TRUE(IsIgnored(policy, V("1.12.9")));
}

}  // namespace
}  // namespace tr::core
