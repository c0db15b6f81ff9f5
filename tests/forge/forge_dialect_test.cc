// The registry of forge dialects and what each one says that the fake forge and the webhook
// tests do not reach: head refs, web URLs, default API URLs, and that Forgejo's requests are
// Gitea's.
#include "reconciler/forge/forge_dialect.h"

#include <gtest/gtest.h>

#include <set>

namespace tr::reconciler::forge {
namespace {

TEST(ForgeDialectTest, EveryDialectIsFoundByItsNameAndNamesAreUnique) {
  std::set<std::string_view> names;
  for (const ForgeDialect* dialect : AllDialects()) {
    EXPECT_TRUE(names.insert(dialect->name()).second) << dialect->name();
    EXPECT_EQ(FindDialect(dialect->name()), dialect);
  }
  EXPECT_EQ(FindDialect("bitbucket"), nullptr);
  EXPECT_EQ(DialectNames("|", /*api_only=*/false), "github|gitlab|gitea|forgejo|generic");
}

TEST(ForgeDialectTest, OnlyDialectsWithAnApiAreForges) {
  EXPECT_EQ(DialectNames("|", /*api_only=*/true), "github|gitlab|gitea|forgejo");
  EXPECT_NE(FindDialect("generic"), nullptr);
  EXPECT_EQ(FindApiDialect("generic"), nullptr);
  EXPECT_EQ(FindApiDialect("nope"), nullptr);
}

struct Expected {
  const char* forge;
  const char* head_ref;
  const char* tree_url;
  std::optional<std::string> default_api_url;
};

TEST(ForgeDialectTest, HeadRefsWebUrlsAndDefaultApiUrls) {
  const Expected table[] = {
      {"github", "refs/pull/7/head", "https://h/o/r/tree/status/status", "https://api.github.com"},
      {"gitlab", "refs/merge-requests/7/head", "https://h/o/r/-/tree/status/status", std::nullopt},
      {"gitea", "refs/pull/7/head", "https://h/o/r/src/branch/status/status", std::nullopt},
      {"forgejo", "refs/pull/7/head", "https://h/o/r/src/branch/status/status", std::nullopt},
  };
  for (const Expected& want : table) {
    const ForgeApiDialect* dialect = FindApiDialect(want.forge);
    ASSERT_NE(dialect, nullptr) << want.forge;
    EXPECT_EQ(dialect->HeadRef(7), want.head_ref) << want.forge;
    EXPECT_EQ(dialect->TreeUrl("https://h/o/r", "status", "status"), want.tree_url) << want.forge;
    EXPECT_EQ(dialect->DefaultApiUrl(), want.default_api_url) << want.forge;
  }
}

TEST(ForgeDialectTest, ForgejoSpeaksGiteasApi) {
  const ForgeApiDialect& gitea = *FindApiDialect("gitea");
  const ForgeApiDialect& forgejo = *FindApiDialect("forgejo");
  EXPECT_EQ(forgejo.AuthHeaders("t"), gitea.AuthHeaders("t"));
  EXPECT_EQ(forgejo.ListCommentsRequest("o/r", 7, 2).path,
            "/repos/o/r/issues/7/comments?limit=50&page=2");
  const CommitStatus status{"abc", "ctx", CommitState::kFailure, "d", ""};
  EXPECT_EQ(forgejo.CommitStatusRequest("o/r", status).body,
            gitea.CommitStatusRequest("o/r", status).body);
  EXPECT_FALSE(forgejo.PullsOfCommitRequest("o/r", "abc").has_value());
}

}  // namespace
}  // namespace tr::reconciler::forge
