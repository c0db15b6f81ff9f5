#include "core/version.h"

#include <gtest/gtest.h>

namespace tr::core {
namespace {

struct ParseCase {
  std::string text;
  int major, minor, patch;
  std::string prerelease;
  int commits;
  bool dirty;
  std::string tag;
};

class TalosVersionParseTest : public testing::TestWithParam<ParseCase> {};

TEST_P(TalosVersionParseTest, ParsesAndRoundTripsTheTag) {
  const ParseCase& c = GetParam();
  absl::StatusOr<Version> v = ParseTalosVersion(c.text);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->major, c.major);
  EXPECT_EQ(v->minor, c.minor);
  EXPECT_EQ(v->patch, c.patch);
  EXPECT_EQ(v->prerelease, c.prerelease);
  EXPECT_EQ(v->commits_since_tag, c.commits);
  EXPECT_EQ(v->dirty, c.dirty);
  EXPECT_EQ(v->Tag(), c.tag);
}

INSTANTIATE_TEST_SUITE_P(
    Tags, TalosVersionParseTest,
    testing::Values(ParseCase{"v1.11.6", 1, 11, 6, "", 0, false, "v1.11.6"},
                    ParseCase{"1.11.6", 1, 11, 6, "", 0, false, "v1.11.6"},
                    ParseCase{"v1.12.0-alpha.1", 1, 12, 0, "alpha.1", 0, false, "v1.12.0-alpha.1"},
                    ParseCase{"v1.12.0-alpha.1-23-g1a2b3c4d", 1, 12, 0, "alpha.1", 23, false,
                              "v1.12.0-alpha.1-23-g1a2b3c4d"},
                    ParseCase{"v1.12.0-alpha.1-23-g1a2b3c4d-dirty", 1, 12, 0, "alpha.1", 23, true,
                              "v1.12.0-alpha.1-23-g1a2b3c4d-dirty"},
                    ParseCase{"v1.11.0-5-gabcdef0", 1, 11, 0, "", 5, false, "v1.11.0-5-gabcdef0"},
                    ParseCase{"v1.11.0-dirty", 1, 11, 0, "", 0, true, "v1.11.0-dirty"},
                    ParseCase{"v1.14.0-rc.1", 1, 14, 0, "rc.1", 0, false, "v1.14.0-rc.1"}));

class InvalidVersionTest : public testing::TestWithParam<std::string> {};

TEST_P(InvalidVersionTest, IsInvalidArgumentNamingTheText) {
  absl::StatusOr<Version> v = ParseTalosVersion(GetParam());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(v.status().message().find("invalid Talos version"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Bad, InvalidVersionTest,
                         testing::Values("", "v", "1.11", "1.11.6.1", "v1.x.0", "01.2.3", "1.2.3-",
                                         "1.2.3-al..pha", "1.2.3-é", " 1.2.3", "1.2.3 ",
                                         "1.2.9999999999", "-1.2.3"));

TEST(KubernetesVersionTest, RejectsDescribeSuffixes) {
  EXPECT_TRUE(ParseKubernetesVersion("v1.35.0").ok());
  EXPECT_TRUE(ParseKubernetesVersion("1.37.0-rc.0").ok());
  absl::StatusOr<Version> v = ParseKubernetesVersion("1.35.0-3-gabcdef0");
  // "3-gabcdef0" is a legal semver prerelease, so it parses as one, not as a describe suffix.
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->commits_since_tag, 0);
  EXPECT_EQ(ParseKubernetesVersion("1.35").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(VersionOrderTest, FollowsSemverAndDescribe) {
  auto v = [](std::string_view s) { return *ParseTalosVersion(s); };
  EXPECT_LT(v("1.11.6"), v("1.12.0"));
  EXPECT_LT(v("1.9.9"), v("1.10.0"));
  EXPECT_LT(v("1.12.0-alpha.1"), v("1.12.0"));
  EXPECT_LT(v("1.12.0-alpha.1"), v("1.12.0-alpha.2"));
  EXPECT_LT(v("1.12.0-alpha.2"), v("1.12.0-alpha.10"));
  EXPECT_LT(v("1.12.0-alpha.1"), v("1.12.0-beta.0"));
  EXPECT_LT(v("1.12.0-alpha"), v("1.12.0-alpha.1"));
  EXPECT_LT(v("1.12.0-1"), v("1.12.0-alpha"));
  EXPECT_LT(v("1.12.0-alpha.1"), v("1.12.0-alpha.1-23-g1a2b3c4d"));
  EXPECT_LT(v("1.12.0-alpha.1-23-g1a2b3c4d"), v("1.12.0-alpha.1-23-g1a2b3c4d-dirty"));
  EXPECT_EQ(v("v1.11.6"), v("1.11.6"));
}

TEST(MinorVersionTest, ArithmeticAndParsing) {
  MinorVersion m{1, 34};
  EXPECT_EQ(m.Next(), (MinorVersion{1, 35}));
  EXPECT_EQ(MinorDistance(m, {1, 36}), 2);
  EXPECT_EQ(MinorDistance({1, 36}, m), -2);
  EXPECT_EQ(m.ToString(), "1.34");
  EXPECT_EQ(*ParseMinorVersion("1.35"), (MinorVersion{1, 35}));
  EXPECT_EQ(ParseMinorVersion("1.35.0").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*ParseTalosVersion("v1.12.3")).Minor(), (MinorVersion{1, 12}));
}

}  // namespace
}  // namespace tr::core
