// The forge client's pull request calls (PullsFromBranch, CreatePull, EditPull) against the fake
// forge over loopback HTTP, for GitHub, GitLab and Gitea: every request is checked by the fake
// (GitHub's against @octokit/openapi's description), and the fake answers as each forge does.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>

#include "reconciler/clients/forge/forge_client.h"
#include "tests/forge/forge_test_support.h"
#include "tests/support/fake_forge.h"
#include "tests/support/openapi_check.h"

namespace tr::reconciler::forge {
namespace {

using forge_test::FakeForge;
using forge_test::FakePull;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

constexpr char kPullsToken[] = "glpat-pullsT0ken";
constexpr char kBranch[] = "proposals/talos-1.13.2";

using forge_test::RecordingTime;

std::unique_ptr<HttpForgeClient> PullsClientFor(const FakeForge& fake, const std::string& forge,
                                                RecordingTime& clock, int per_minute = 40) {
  return forge_test::FakeForgeClient(fake, forge, kPullsToken, clock, per_minute);
}

PullDraft Draft(std::vector<std::string> labels = {}) {
  return {kBranch, "main", "Talos 1.13.2", "Bumps Talos from 1.13.1 to 1.13.2.", std::move(labels)};
}

std::optional<FakePull> FakePullNumbered(const FakeForge& fake, int64_t number) {
  for (const FakePull& pull : fake.Pulls()) {
    if (pull.number == number) return pull;
  }
  return std::nullopt;
}

class ForgePullsTest : public testing::TestWithParam<std::string> {
 protected:
  FakeForge fake_{GetParam(), "acme/fleet", kPullsToken};
  RecordingTime clock_;
  std::unique_ptr<HttpForgeClient> client_ = PullsClientFor(fake_, GetParam(), clock_);
};

TEST_P(ForgePullsTest, OpensWithLabelsAndFindsItOpenThenClosedThenMerged) {
  fake_.DefineLabel("release");
  fake_.DefineLabel("talos");
  fake_.AddForeignPull("fix-typo");
  fake_.AddForeignPull(kBranch, /*from_fork=*/true);  // same branch name, someone's fork
  auto opened = client_->CreatePull(Draft({"release", "talos", "not-defined"}), {});
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_GE(opened->number, 100'001);
  EXPECT_EQ(opened->state, "open");
  EXPECT_EQ(opened->title, "Talos 1.13.2");
  EXPECT_EQ(opened->body, "Bumps Talos from 1.13.1 to 1.13.2.");
  EXPECT_EQ(opened->head_branch, kBranch);
  EXPECT_EQ(opened->base_branch, "main");
  EXPECT_THAT(opened->url, HasSubstr(std::to_string(opened->number)));

  const std::optional<FakePull> kept = FakePullNumbered(fake_, opened->number);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->head, kBranch);
  if (GetParam() == "gitea") {
    // Gitea takes label ids: a name the repository has no label of is left out.
    EXPECT_THAT(kept->labels, UnorderedElementsAre("release", "talos"));
  } else {
    EXPECT_THAT(kept->labels, UnorderedElementsAre("release", "talos", "not-defined"));
  }

  for (const char* state : {"open", "closed", "merged"}) {
    if (std::string(state) == "closed") fake_.ClosePull(opened->number);
    if (std::string(state) == "merged") fake_.MarkPullMerged(opened->number);
    auto found = client_->PullsFromBranch(kBranch, {});
    ASSERT_TRUE(found.ok()) << found.status();
    ASSERT_EQ(found->size(), 1u) << state;
    EXPECT_EQ((*found)[0].number, opened->number);
    EXPECT_EQ((*found)[0].state, state);
    EXPECT_EQ((*found)[0].title, opened->title);
    EXPECT_EQ((*found)[0].body, opened->body);
    EXPECT_EQ((*found)[0].head_branch, kBranch);
    EXPECT_EQ((*found)[0].base_branch, "main");
    EXPECT_EQ((*found)[0].url, opened->url);
  }
  EXPECT_TRUE(fake_.Violations().empty());
}

TEST_P(ForgePullsTest, EditReplacesTitleAndBody) {
  auto opened = client_->CreatePull(Draft(), {});
  ASSERT_TRUE(opened.ok()) << opened.status();
  ASSERT_TRUE(client_->EditPull(opened->number, "Talos 1.13.3", "Now to 1.13.3.", {}).ok());
  const std::optional<FakePull> kept = FakePullNumbered(fake_, opened->number);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->title, "Talos 1.13.3");
  EXPECT_EQ(kept->body, "Now to 1.13.3.");
  EXPECT_EQ(kept->edits, 1);
  EXPECT_TRUE(kept->labels.empty());
  auto found = client_->PullsFromBranch(kBranch, {});
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].title, "Talos 1.13.3");
  EXPECT_EQ((*found)[0].body, "Now to 1.13.3.");
  // Editing one that does not exist is the forge's 404.
  EXPECT_EQ(client_->EditPull(opened->number + 1000, "t", "b", {}).code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(fake_.Violations().empty());
}

TEST_P(ForgePullsTest, ABranchWithoutPullRequestsHasNone) {
  fake_.AddForeignPull("fix-typo");
  fake_.AddForeignPull(kBranch, /*from_fork=*/true);
  auto found = client_->PullsFromBranch(kBranch, {});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_TRUE(found->empty());
  EXPECT_TRUE(fake_.Violations().empty());
}

// Gitea lists every pull request of the repository, 50 a page: the client reads on until a
// short page. The others filter by branch and need one page.
TEST_P(ForgePullsTest, FindsEveryPullRequestOfTheBranchNewestFirstAcrossPages) {
  auto first = client_->CreatePull(Draft(), {});
  ASSERT_TRUE(first.ok()) << first.status();
  fake_.ClosePull(first->number);
  for (int i = 0; i < 120; ++i) fake_.AddForeignPull("topic-" + std::to_string(i));
  auto second = client_->CreatePull(Draft(), {});
  ASSERT_TRUE(second.ok()) << second.status();
  auto found = client_->PullsFromBranch(kBranch, {});
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->size(), 2u);
  EXPECT_EQ((*found)[0].number, second->number);
  EXPECT_EQ((*found)[0].state, "open");
  EXPECT_EQ((*found)[1].number, first->number);
  EXPECT_EQ((*found)[1].state, "closed");
  int list_requests = 0;
  for (const std::string& request : fake_.Requests()) {
    list_requests += request.starts_with("GET ") && !request.ends_with("/labels");
  }
  EXPECT_EQ(list_requests, GetParam() == "gitea" ? 3 : 1);  // 123 pull requests, 50 a page
  EXPECT_TRUE(fake_.Violations().empty());
}

TEST_P(ForgePullsTest, AMalformedListIsInvalidArgumentNamingTheField) {
  const bool gitlab = GetParam() == "gitlab";
  // An entry without its head branch.
  fake_.Inject({200,
                {},
                gitlab ? R"([{"iid":5,"state":"opened","title":"t","description":null,
                             "target_branch":"main","web_url":"https://x/5",
                             "source_project_id":1,"target_project_id":1}])"
                       : R"([{"number":5,"state":"open","title":"t","body":null,
                             "head":{"repo":{"id":1}},"base":{"ref":"main","repo":{"id":1}},
                             "html_url":"https://x/5"}])"});
  absl::Status missing = client_->PullsFromBranch(kBranch, {}).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(), HasSubstr(gitlab ? "source_branch is missing" : "head.ref"));
  // A number that is a string, and an answer that is no list.
  fake_.Inject({200, {}, gitlab ? R"([{"iid":"5"}])" : R"([{"number":"5"}])"});
  absl::Status mistyped = client_->PullsFromBranch(kBranch, {}).status();
  EXPECT_EQ(mistyped.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mistyped.message(),
              HasSubstr(gitlab ? "iid is not an integer" : "number is not an integer"));
  fake_.Inject({200, {}, R"({"message":"not a list"})"});
  EXPECT_EQ(client_->PullsFromBranch(kBranch, {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(fake_.Violations().empty());
}

TEST_P(ForgePullsTest, AMalformedCreationAnswerIsInvalidArgumentNamingTheField) {
  fake_.Inject({201, {}, R"({"title":"t"})"});
  absl::Status created = client_->CreatePull(Draft(), {}).status();
  EXPECT_EQ(created.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(created.message(), HasSubstr(GetParam() == "gitlab" ? "iid" : "number"));
  fake_.Inject({201, {}, "<html>502</html>"});
  EXPECT_EQ(client_->CreatePull(Draft(), {}).status().code(), absl::StatusCode::kInvalidArgument);
}

// GitHub answers 422 (InvalidArgument), GitLab and Gitea 409 (Aborted: look again).
TEST_P(ForgePullsTest, OpeningAgainWhileOneIsOpenIsRefusedByTheForge) {
  ASSERT_TRUE(client_->CreatePull(Draft(), {}).ok());
  EXPECT_EQ(
      client_->CreatePull(Draft(), {}).status().code(),
      GetParam() == "github" ? absl::StatusCode::kInvalidArgument : absl::StatusCode::kAborted);
  EXPECT_EQ(fake_.Pulls().size(), 1u);
}

// Opening and editing are content-creating: paced with comments and statuses.
TEST_P(ForgePullsTest, OpeningAndEditingArePacedAsContent) {
  RecordingTime clock;
  auto client = PullsClientFor(fake_, GetParam(), clock, /*per_minute=*/1);
  auto opened = client->CreatePull(Draft(), {});  // no labels: one request on every forge
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_TRUE(clock.slept.empty());
  ASSERT_TRUE(client->EditPull(opened->number, "t", "b", {}).ok());
  EXPECT_THAT(clock.slept, ElementsAre(seconds(60)));
  ASSERT_TRUE(client->PullsFromBranch(kBranch, {}).ok());  // reads are not paced
  EXPECT_EQ(clock.slept.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Forges, ForgePullsTest, testing::Values("github", "gitlab", "gitea"),
                         [](const auto& p) { return p.param; });

TEST(GiteaPullLabelsTest, LabelIdsAreLookedUpAcrossPages) {
  FakeForge fake("gitea", "acme/fleet", kPullsToken);
  RecordingTime clock;
  auto client = PullsClientFor(fake, "gitea", clock);
  for (int i = 0; i < 60; ++i) fake.DefineLabel("area/" + std::to_string(i));
  fake.DefineLabel("release");  // on the second page of 50
  auto opened = client->CreatePull(Draft({"release", "area/3"}), {});
  ASSERT_TRUE(opened.ok()) << opened.status();
  const std::optional<FakePull> kept = FakePullNumbered(fake, opened->number);
  ASSERT_TRUE(kept.has_value());
  EXPECT_THAT(kept->labels, ElementsAre("release", "area/3"));
  EXPECT_THAT(fake.Requests(),
              ElementsAre("GET /repos/acme/fleet/labels", "GET /repos/acme/fleet/labels",
                          "POST /repos/acme/fleet/pulls"));
  EXPECT_TRUE(fake.Violations().empty());
}

TEST(GithubPullLabelsTest, LabelsAreAddedToTheOpenedPullRequestsIssue) {
  FakeForge fake("github", "acme/fleet", kPullsToken);
  RecordingTime clock;
  auto client = PullsClientFor(fake, "github", clock);
  auto opened = client->CreatePull(Draft({"release"}), {});
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_THAT(fake.Requests(), ElementsAre("POST /repos/acme/fleet/pulls",
                                           "POST /repos/acme/fleet/issues/" +
                                               std::to_string(opened->number) + "/labels"));
  // Without labels there is no second request (GitHub asks for at least one label).
  ASSERT_TRUE(client->CreatePull({"other", "main", "t", "b", {}}, {}).ok());
  EXPECT_EQ(fake.Requests().size(), 3u);
  EXPECT_TRUE(fake.Violations().empty());
}

// The pull request is open by then: the error says so, with the code of the labels' failure.
TEST(GithubPullLabelsTest, LabelsRefusedAfterOpeningNameThePullRequest) {
  FakeForge fake("github", "acme/fleet", kPullsToken);
  RecordingTime clock;
  auto client = PullsClientFor(fake, "github", clock);
  // The forge answers the creation with pull request 5, which it then does not know (404).
  fake.Inject({201,
               {},
               R"({"number":5,"state":"open","title":"t","body":null,"html_url":"https://x/5",
                   "head":{"ref":"b","repo":{"id":1}},"base":{"ref":"main","repo":{"id":1}}})"});
  const absl::Status status = client->CreatePull(Draft({"release"}), {}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("pull request #5 was opened but its labels were not"));
  EXPECT_THAT(fake.Requests(), ElementsAre("POST /repos/acme/fleet/pulls",
                                           "POST /repos/acme/fleet/issues/5/labels"));
}

// What the fake checks GitHub's requests with is not vacuous for the new calls either.
TEST(GithubPullsOpenApiTest, RefusesPullRequestCallsGithubWouldRefuse) {
  const auto& spec = forge_test::GithubOpenApi::Installed();
  const std::map<std::string, std::string> headers{{"accept", "application/vnd.github+json"},
                                                   {"x-github-api-version", "2022-11-28"},
                                                   {"authorization", "Bearer t"},
                                                   {"user-agent", "x"},
                                                   {"content-type", "application/json"}};
  EXPECT_TRUE(
      spec.Check({"POST", "/repos/o/r/issues/3/labels", {}, headers, R"({"labels":["release"]})"})
          .empty());
  EXPECT_THAT(
      spec.Check({"POST", "/repos/o/r/issues/3/labels", {}, headers, R"({"label":"release"})"}),
      ElementsAre(HasSubstr("field label is not in")));
  EXPECT_THAT(spec.Check({"POST", "/repos/o/r/pulls", {}, headers, R"({"title":"t","head":"h"})"}),
              ElementsAre(HasSubstr("required field base")));
  EXPECT_THAT(spec.Check({"GET", "/repos/o/r/pulls", {{"state", "merged"}}, headers, ""}),
              ElementsAre(HasSubstr("query state")));
}

}  // namespace
}  // namespace tr::reconciler::forge
