// The registry of forge dialects and what each one says that the fake forge and the webhook
// tests do not reach: head refs, web URLs, default API URLs, that Forgejo's requests are
// Gitea's, and how pull request answers are read.
#include "reconciler/clients/forge/forge_dialect.h"

#include <gmock/gmock.h>
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

TEST(ForgeDialectTest, ForgejoOpensPullRequestsAsGiteaDoes) {
  const ForgeApiDialect& gitea = *FindApiDialect("gitea");
  const ForgeApiDialect& forgejo = *FindApiDialect("forgejo");
  const PullDraft draft{"b", "main", "t", "d", {"x"}};
  EXPECT_EQ(forgejo.PullsFromBranchRequest("o/r", "b", 2).path,
            "/repos/o/r/pulls?state=all&limit=50&page=2");
  EXPECT_EQ(forgejo.CreatePullRequest("o/r", draft, {4}).body,
            gitea.CreatePullRequest("o/r", draft, {4}).body);
  EXPECT_EQ(forgejo.ListLabelsRequest("o/r", 1)->path, "/repos/o/r/labels?limit=50&page=1");
  EXPECT_FALSE(forgejo.AddLabelsRequest("o/r", 3, {"x"}).has_value());
}

TEST(ForgeDialectTest, BranchNamesAreEncodedInQueries) {
  EXPECT_EQ(FindApiDialect("github")->PullsFromBranchRequest("acme/fleet", "a&b c", 1).path,
            "/repos/acme/fleet/pulls?state=all&head=acme%3Aa%26b%20c&per_page=100&page=1");
  EXPECT_EQ(FindApiDialect("gitlab")->PullsFromBranchRequest("g/s/p", "a&b", 2).path,
            "/projects/g%2Fs%2Fp/merge_requests?source_branch=a%26b&state=all&per_page=100&page=2");
}

// A GitHub-shaped pull request (Gitea's copies it) with these head repository and state fields.
std::string GithubStylePull(const std::string& head_repo, const std::string& state_fields) {
  return R"({"number":3,"title":"t","body":"b","html_url":"u","head":{"ref":"br","repo":)" +
         head_repo + R"(},"base":{"ref":"main","repo":{"id":1}},)" + state_fields + "}";
}

TEST(ForgeDialectTest, PullListsKeepOnlyTheRepositorysOwnBranchAndReadEveryState) {
  const ForgeApiDialect& github = *FindApiDialect("github");
  struct Case {
    std::string entry;
    std::optional<std::string> state;  // nullopt: left out
  };
  const Case cases[] = {
      {GithubStylePull(R"({"id":1})", R"("state":"open","merged_at":null)"), "open"},
      {GithubStylePull(R"({"id":1})", R"("state":"closed","merged_at":null)"), "closed"},
      {GithubStylePull(R"({"id":1})", R"("state":"closed","merged_at":"2026-01-01T00:00:00Z")"),
       "merged"},
      {GithubStylePull(R"({"id":1})", R"("state":"closed","merged":true)"), "merged"},  // Gitea
      {GithubStylePull(R"({"id":2})", R"("state":"open")"), std::nullopt},  // a fork's branch
      {GithubStylePull("null", R"("state":"open")"), std::nullopt},         // a deleted fork's
  };
  for (const Case& c : cases) {
    auto page = github.ParsePulls("[" + c.entry + "]", "br");
    ASSERT_TRUE(page.ok()) << page.status() << c.entry;
    EXPECT_EQ(page->entries, 1u);
    if (!c.state) {
      EXPECT_TRUE(page->pulls.empty()) << c.entry;
    } else {
      ASSERT_EQ(page->pulls.size(), 1u) << c.entry;
      EXPECT_EQ(page->pulls[0].state, *c.state) << c.entry;
    }
  }
  auto other_branch = github.ParsePulls("[" + cases[0].entry + "]", "another");
  ASSERT_TRUE(other_branch.ok());
  EXPECT_TRUE(other_branch->pulls.empty());
  EXPECT_EQ(
      github.ParsePulls("[" + GithubStylePull(R"({"id":1})", R"("state":"draft")") + "]", "br")
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
}

TEST(ForgeDialectTest, MergeRequestStatesAreReadAsPullRequestStates) {
  const ForgeApiDialect& gitlab = *FindApiDialect("gitlab");
  const std::pair<const char*, const char*> states[] = {
      {"opened", "open"}, {"locked", "open"}, {"closed", "closed"}, {"merged", "merged"}};
  for (const auto& [given, read] : states) {
    const std::string answer =
        std::string(R"({"iid":4,"title":"t","description":null,"source_branch":"br",)") +
        R"("target_branch":"main","web_url":"u","state":")" + given + R"("})";
    auto pull = gitlab.ParsePull(answer);
    ASSERT_TRUE(pull.ok()) << pull.status();
    EXPECT_EQ(pull->state, read);
    EXPECT_EQ(pull->body, "");
  }
  auto unknown = gitlab.ParsePull(
      R"({"iid":4,"title":"t","description":"","source_branch":"br","target_branch":"main",)"
      R"("web_url":"u","state":"reopened"})");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(unknown.status().message()), testing::HasSubstr("state"));
}
}  // namespace
}  // namespace tr::reconciler::forge
