// Rollout reporting with several replicas: two PullRequestFlows, each with its own forge client
// against one fake forge over loopback HTTP, record into one status store standing for the
// status branch. Only the flow whose `reports` says so talks to the forge about rollouts, and
// it reports every replica's clusters; a flow that becomes the reporter sends the state again.
// Previews: a real mirror (LibGitSource) of a real repository; a pull request past the preview
// budget gets a failing plan status naming the limit, and its preview ref goes when it closes
// or merges.
#include "reconciler/features/pull_requests/pull_request_flow.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>

#include "fmt/format.h"
#include "reconciler/clients/factory/factory_installers.h"
#include "tests/forge/flow_doubles.h"
#include "tests/support/blackhole.h"
#include "tests/support/fake_forge.h"
#include "tests/support/loopback_http.h"
#include "tests/support/process.h"
#include "tests/support/repos.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler::pull_requests {
namespace {

using forge::CommitState;
using forge::CommitStatus;
using forge::ForgeApi;
using forge::ForgeComment;
using forge::HttpForgeClient;
using forge::PullRequestAction;
using forge::WebhookEvent;
using forge::WebhookKind;
using forge_test::FakeForge;
using forge_test::FakeStatus;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kToken[] = "ghp_flowTestTokenNeverLogged";
constexpr char kOld[] = "1111111111111111111111111111111111111111";
constexpr char kMerge[] = "2222222222222222222222222222222222222222";
constexpr int64_t kPull = 7;

// Passes every call on to the replica's client and counts it, so a test sees which replica
// talked to the forge.
class CountingApi final : public ForgeApi {
 public:
  explicit CountingApi(ForgeApi& api) : api_(api) {}
  absl::StatusOr<std::optional<ForgeComment>> FindComment(int64_t number, std::string_view marker,
                                                          std::stop_token stop) override {
    ++calls_;
    return api_.FindComment(number, marker, stop);
  }
  absl::StatusOr<int64_t> CreateComment(int64_t number, const std::string& body,
                                        std::stop_token stop) override {
    ++calls_;
    return api_.CreateComment(number, body, stop);
  }
  absl::Status EditComment(int64_t number, int64_t id, const std::string& body,
                           std::stop_token stop) override {
    ++calls_;
    return api_.EditComment(number, id, body, stop);
  }
  absl::Status SetCommitStatus(const CommitStatus& status, std::stop_token stop) override {
    ++calls_;
    return api_.SetCommitStatus(status, stop);
  }
  absl::StatusOr<std::optional<int64_t>> MergedPullOf(const std::string& sha,
                                                      std::stop_token stop) override {
    ++calls_;
    return api_.MergedPullOf(sha, stop);
  }
  absl::StatusOr<std::vector<forge::ForgePull>> PullsFromBranch(const std::string& head_branch,
                                                                std::stop_token stop) override {
    ++calls_;
    return api_.PullsFromBranch(head_branch, stop);
  }
  absl::StatusOr<forge::ForgePull> CreatePull(const forge::PullDraft& draft,
                                              std::stop_token stop) override {
    ++calls_;
    return api_.CreatePull(draft, stop);
  }
  absl::Status EditPull(int64_t number, const std::string& title, const std::string& body,
                        std::stop_token stop) override {
    ++calls_;
    return api_.EditPull(number, title, body, stop);
  }
  int calls() const { return calls_; }

 private:
  ForgeApi& api_;
  std::atomic<int> calls_ = 0;
};

// One replica's forge reporting: client, comments, flow and the store it records through.
struct Replica {
  Replica(const FakeForge& fake, NoPreviews& git, SharedBranch& branch, std::atomic<bool>& reports,
          Env& env)
      : client(UnpacedClient(fake, kToken)),
        api(*client),
        comments(api, std::chrono::milliseconds(0), env),
        flow(git, git, api, comments, env, Options(branch, reports)),
        store(branch, flow) {}

  static PullRequestFlowOptions Options(SharedBranch& branch, std::atomic<bool>& reports) {
    PullRequestFlowOptions options;
    options.dialect = forge::FindApiDialect("github");
    options.reports = [&reports] { return reports.load(); };
    options.branch = &branch;
    options.knows_cluster = [](const std::string& cluster) { return cluster != "ghost"; };
    return options;
  }
  void Record(const std::string& cluster, core::ClusterPhase phase, const std::string& applied,
              const std::string& attempted = kMerge, const std::string& message = "") {
    core::ClusterStatus status;
    status.cluster = cluster;
    status.phase = phase;
    status.message = message;
    status.desired_commit_attempted = attempted;
    status.desired_commit_applied = applied;
    ASSERT_TRUE(store.Record(status, {}).ok());
  }
  bool Idle() { return flow.Idle() && comments.Idle(); }

  std::unique_ptr<HttpForgeClient> client;
  CountingApi api;
  PullRequestComments comments;
  PullRequestFlow flow;
  ReportingStatusStore store;
};

class PullRequestFlowReplicasTest : public testing::Test {
 protected:
  PullRequestFlowReplicasTest() { fake_.SetMergedPull(kMerge, kPull); }

  // Waits until both replicas have sent everything they were going to: their four threads (a
  // flow and a comment writer each) wait again.
  void Settle() {
    ASSERT_TRUE(env_.RunTimersUntil(4, [&] { return first_.Idle() && second_.Idle(); }));
  }
  // What the periodic refresh does: `reporter` re-reads the branch once the records are in.
  void RefreshAfterRecords(Replica& reporter) {
    Settle();
    reporter.flow.Refresh();
    Settle();
  }
  std::vector<std::string> RolloutStates() {
    std::vector<std::string> states;
    for (const FakeStatus& s : fake_.Statuses(kMerge)) {
      if (s.context == kRolloutContext) states.push_back(s.state);
    }
    return states;
  }
  std::string Comment() {
    std::vector<forge_test::FakeComment> comments = fake_.Comments(kPull);
    return comments.size() == 1 ? comments[0].body : "not one comment";
  }

  FakeForge fake_{"github", "acme/fleet", kToken};
  NoPreviews git_;
  SharedBranch branch_;
  test_support::SimulatedEnv env_;
  std::atomic<bool> first_reports_ = true, second_reports_ = false;
  Replica first_{fake_, git_, branch_, first_reports_, env_};
  Replica second_{fake_, git_, branch_, second_reports_, env_};
};

TEST_F(PullRequestFlowReplicasTest, OnlyTheReporterSendsTheRolloutWithEveryReplicasClusters) {
  second_.Record("alpha", core::ClusterPhase::kUpgradingTalos, kOld);  // a standby's cluster
  first_.Record("beta", core::ClusterPhase::kUpgradingTalos, kOld);
  RefreshAfterRecords(first_);
  EXPECT_THAT(RolloutStates(), ElementsAre("pending"));
  EXPECT_THAT(Comment(), HasSubstr("| alpha | UpgradingTalos |"));
  EXPECT_THAT(Comment(), HasSubstr("| beta | UpgradingTalos |"));

  // alpha done while beta is not: the rollout is still pending (no success, then pending).
  second_.Record("alpha", core::ClusterPhase::kReady, kMerge);
  RefreshAfterRecords(first_);
  EXPECT_THAT(RolloutStates(), ElementsAre("pending"));
  EXPECT_THAT(Comment(), HasSubstr("| alpha | Ready |"));

  first_.Record("beta", core::ClusterPhase::kReady, kMerge);
  Settle();
  EXPECT_THAT(RolloutStates(), ElementsAre("pending", "success"));
  EXPECT_THAT(Comment(), HasSubstr(": succeeded"));
  EXPECT_THAT(Comment(), HasSubstr("| alpha | Ready |"));
  EXPECT_THAT(Comment(), HasSubstr("| beta | Ready |"));
  EXPECT_EQ(second_.api.calls(), 0);  // the standby never talked to the forge
  EXPECT_THAT(fake_.Violations(), IsEmpty());
}

// A status file of a cluster without a profile (planted on the status branch) judges no
// rollout: the change succeeds when its real cluster does, and the comment never shows it.
TEST_F(PullRequestFlowReplicasTest, AStatusOfAClusterWithoutAProfileCountsForNothing) {
  second_.Record("ghost", core::ClusterPhase::kUpgradeFailed, kOld);
  first_.Record("alpha", core::ClusterPhase::kUpgradingTalos, kOld);
  RefreshAfterRecords(first_);
  first_.Record("alpha", core::ClusterPhase::kReady, kMerge);
  RefreshAfterRecords(first_);
  EXPECT_THAT(RolloutStates(), ElementsAre("pending", "success"));
  EXPECT_THAT(Comment(), HasSubstr("| alpha | Ready |"));
  EXPECT_THAT(Comment(), Not(HasSubstr("ghost")));
}

TEST_F(PullRequestFlowReplicasTest, AReplicaThatBecomesTheReporterSendsTheStateAgain) {
  first_.Record("alpha", core::ClusterPhase::kUpgradingTalos, kOld);
  Settle();
  EXPECT_THAT(RolloutStates(), ElementsAre("pending"));

  // Shard 0 moves: the new reporter reads the branch and sends the rollout's state again.
  first_reports_ = false;
  second_reports_ = true;
  RefreshAfterRecords(second_);
  EXPECT_THAT(RolloutStates(), ElementsAre("pending", "pending"));
  EXPECT_THAT(Comment(), HasSubstr("| alpha | UpgradingTalos |"));

  // The old reporter still records alpha (it may hold alpha's shard) but no longer reports.
  const int first_calls = first_.api.calls();
  first_.Record("alpha", core::ClusterPhase::kReady, kMerge);
  Settle();
  EXPECT_THAT(RolloutStates(), ElementsAre("pending", "pending"));
  RefreshAfterRecords(second_);
  EXPECT_THAT(RolloutStates(), ElementsAre("pending", "pending", "success"));
  EXPECT_THAT(Comment(), HasSubstr("| alpha | Ready |"));
  EXPECT_EQ(first_.api.calls(), first_calls);
}

TEST_F(PullRequestFlowReplicasTest, TheScopeComesFromThePlanAnotherReplicaWrote) {
  // The plan another replica posted: it changes alpha only.
  fake_.AddForeignComment(kPull, std::string(kCommentMarker) +
                                     "\n<!-- talos-reconciler:changes alpha -->\n"
                                     "## Plan for 2222222222\n\nalpha: v1.9.0 → v1.9.1");
  first_.Record("alpha", core::ClusterPhase::kReady, kMerge);
  first_.Record("gamma", core::ClusterPhase::kWaitingForWindow, kOld);  // not in the plan
  Settle();
  EXPECT_THAT(RolloutStates(), ElementsAre("success"));
  EXPECT_THAT(Comment(), HasSubstr("alpha: v1.9.0 → v1.9.1\n\n## Rollout of 222222222222"));
  EXPECT_THAT(Comment(), Not(HasSubstr("| gamma |")));
  EXPECT_EQ(second_.api.calls(), 0);
}

// Two pull requests merged one after the other for the same cluster (issue 48): each report
// describes its own change, and a final one never goes back.
class BackToBackMergesTest : public PullRequestFlowReplicasTest {
 protected:
  static constexpr char kSecond[] = "3333333333333333333333333333333333333333";
  static constexpr int64_t kSecondPull = 8;

  BackToBackMergesTest() {
    fake_.SetMergedPull(kSecond, kSecondPull);
    for (auto [number, commit] : {std::pair{kPull, kMerge}, std::pair{kSecondPull, kSecond}}) {
      fake_.AddForeignComment(number, fmt::format("{}\n<!-- talos-reconciler:changes alpha -->\n"
                                                  "## Plan for {}\n\nalpha: a plan",
                                                  kCommentMarker, std::string(commit, 10)));
    }
  }
  std::vector<std::string> States(const std::string& commit) {
    std::vector<std::string> states;
    for (const FakeStatus& s : fake_.Statuses(commit)) {
      if (s.context == kRolloutContext) states.push_back(s.state + ": " + s.description);
    }
    return states;
  }
  std::string CommentOf(int64_t number) {
    std::vector<forge_test::FakeComment> comments = fake_.Comments(number);
    return comments.size() == 1 ? comments[0].body : "not one comment";
  }
};

TEST_F(BackToBackMergesTest, ASecondMergeLeavesTheFirstReportFinal) {
  first_.Record("alpha", core::ClusterPhase::kUpgradingTalos, kOld);
  Settle();
  first_.Record("alpha", core::ClusterPhase::kReady, kMerge);
  Settle();
  // The second pull request merges: alpha attempts it while it last applied the first.
  first_.Record("alpha", core::ClusterPhase::kUpgradingTalos, kMerge, kSecond);
  Settle();
  first_.Record("alpha", core::ClusterPhase::kReady, kSecond, kSecond);
  Settle();
  EXPECT_THAT(States(kMerge),
              ElementsAre("pending: Rolling out", "success: Every cluster it changes applied it"));
  EXPECT_THAT(States(kSecond),
              ElementsAre("pending: Rolling out", "success: Every cluster it changes applied it"));
  EXPECT_THAT(CommentOf(kPull), HasSubstr("## Rollout of 222222222222: succeeded"));
  EXPECT_THAT(CommentOf(kPull), HasSubstr("| alpha | Ready |"));
  EXPECT_THAT(CommentOf(kSecondPull), HasSubstr("## Rollout of 333333333333: succeeded"));
  EXPECT_THAT(fake_.Violations(), IsEmpty());
}

TEST_F(BackToBackMergesTest, AChangeSupersededBeforeItFinishedSaysByWhich) {
  first_.Record("alpha", core::ClusterPhase::kUpgradingTalos, kOld);
  Settle();
  // The second merges while alpha still rolls the first out: alpha now rolls out the second.
  first_.Record("alpha", core::ClusterPhase::kUpgradingTalos, kOld, kSecond);
  Settle();
  EXPECT_THAT(States(kMerge),
              ElementsAre("pending: Rolling out",
                          "success: Superseded by #8 before it finished: reported there"));
  EXPECT_THAT(CommentOf(kPull), HasSubstr("## Rollout of 222222222222: superseded by #8"));
  EXPECT_THAT(CommentOf(kPull), HasSubstr("| alpha | superseded | — | — | superseded by #8 |"));
  first_.Record("alpha", core::ClusterPhase::kReady, kSecond, kSecond);
  Settle();
  EXPECT_EQ(States(kMerge).size(), 2u);  // final: never reported again
  EXPECT_THAT(States(kSecond),
              ElementsAre("pending: Rolling out", "success: Every cluster it changes applied it"));
}

// A status message quoting an outsider (a health check's answer) cannot add a mention, a
// link or a table cell to the rollout comment.
TEST_F(BackToBackMergesTest, AnOutsidersTextInTheCommentIsInert) {
  first_.Record("alpha", core::ClusterPhase::kUpgradeFailed, kOld, kMerge,
                "gate: [Log in](https://evil.example) @acme/admins | <img src=x>\nsecond line");
  Settle();
  const std::string comment = CommentOf(kPull);
  EXPECT_THAT(comment, HasSubstr("| alpha | UpgradeFailed |"));
  EXPECT_THAT(comment, HasSubstr("gate: \\[Log in\\]\\(https://evil.example\\) @\u200bacme/admins "
                                 "\\| \\<img src=x\\> second line |"));
  EXPECT_THAT(comment, Not(::testing::ContainsRegex("[^\\\\]\\[Log in")));
  EXPECT_THAT(comment, Not(::testing::ContainsRegex("[^\\\\]<img")));
}

// A flow planning previews from a real mirror of `upstream_`, reporting to the fake forge.
class PullRequestPreviewTest : public testing::Test {
 protected:
  PullRequestPreviewTest() {
    upstream_.Commit({{"clusters/prod.yaml", "kind: ClusterProfile\n"}}, "initial");
    gitsource::GitSourceConfig config;
    config.remote.url = "file://" + upstream_.bare().string();
    config.remote.limits.operation_timeout = std::chrono::seconds(20);
    config.state_dir = tmp_ / "state";
    auto source = gitsource::LibGitSource::Open(config, Env::Default());
    EXPECT_TRUE(source.ok()) << source.status();
    if (!source.ok()) return;
    source_ = *std::move(source);
    PullRequestFlowOptions options;
    options.dialect = forge::FindApiDialect("github");
    flow_ = std::make_unique<PullRequestFlow>(*source_, *source_, *client_, comments_, env_,
                                              std::move(options));
  }

  // Publishes a head for pull request kPull: `entries` profiles, every one the same blob of
  // `blob_bytes` bytes (fast-import writes it once, as a hostile pack would carry it).
  std::string PublishHead(int entries, std::size_t blob_bytes) {
    std::string stream =
        fmt::format("blob\nmark :1\ndata {}\n{}\n", blob_bytes, std::string(blob_bytes, 'a'));
    stream += fmt::format(
        "commit refs/pull/{}/head\ncommitter Mallory <m@example.com> 1700000000 +0000\n"
        "data 5\nhuge\nfrom refs/heads/main\n",
        kPull);
    for (int i = 0; i < entries; ++i) {
      stream += fmt::format("M 100644 :1 clusters/c{:05}.yaml\n", i);
    }
    upstream_.FastImport(stream + "\n");
    return upstream_.GitBare({"rev-parse", fmt::format("refs/pull/{}/head", kPull)});
  }

  WebhookEvent Event(PullRequestAction action, const std::string& head) const {
    WebhookEvent event;
    event.kind = WebhookKind::kPullRequest;
    event.number = kPull;
    event.action = action;
    event.head_sha = head;
    event.base_branch = "main";
    if (action == PullRequestAction::kMerged) event.merge_commit = kMerge;
    return event;
  }

  // Sends `event` and waits until the flow and the comments have done everything for it (their
  // two threads wait again).
  void Deliver(const WebhookEvent& event) {
    flow_->PullRequestChanged(event);
    ASSERT_TRUE(env_.RunTimersUntil(2, [&] { return flow_->Idle() && comments_.Idle(); }));
  }

  bool PreviewRefExists() const {
    const gitsource::testing::ProcessResult result = gitsource::testing::RunCommand(
        {"git", "-C", (tmp_ / "state" / "mirror.git").string(), "rev-parse", "--verify", "-q",
         fmt::format("refs/previews/pull/{}/head", kPull)});
    return result.exit_code == 0;
  }

  std::vector<FakeStatus> PlanStatuses(const std::string& sha) const {
    std::vector<FakeStatus> plans;
    for (const FakeStatus& s : fake_.Statuses(sha)) {
      if (s.context == kPlanContext) plans.push_back(s);
    }
    return plans;
  }

  gitsource::testing::TempDir tmp_;
  gitsource::testing::UpstreamRepo upstream_{tmp_ / "served", "profiles"};
  std::unique_ptr<gitsource::LibGitSource> source_;
  FakeForge fake_{"github", "acme/fleet", kToken};
  std::unique_ptr<HttpForgeClient> client_ = UnpacedClient(fake_, kToken);
  // Simulated time from the real moment: the flow's plans take their time from it.
  test_support::SimulatedEnv env_{Env::Default().Now()};
  PullRequestComments comments_{*client_, std::chrono::milliseconds(0), env_};
  std::unique_ptr<PullRequestFlow> flow_;  // last: stops before what it uses goes
};

TEST_F(PullRequestPreviewTest, AHeadPastThePreviewBudgetGetsAFailingStatusNamingTheLimit) {
  ASSERT_NE(flow_, nullptr);
  // The issue's probe: 2,500 entries naming one 1 MiB blob, a few KB as a pack.
  const std::string head = PublishHead(2500, std::size_t{1} << 20);
  Deliver(Event(PullRequestAction::kOpened, head));
  std::vector<FakeStatus> plans = PlanStatuses(head);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].state, "failure");
  EXPECT_THAT(plans[0].description, HasSubstr("pull request limit of 500 files"));
  std::vector<forge_test::FakeComment> comments = fake_.Comments(kPull);
  ASSERT_EQ(comments.size(), 1u);
  EXPECT_THAT(comments[0].body, HasSubstr("Not planned: "));
  EXPECT_THAT(comments[0].body, HasSubstr("pull request limit of 500 files"));
  EXPECT_FALSE(PreviewRefExists());  // refused: its objects are not kept
  EXPECT_THAT(fake_.Violations(), IsEmpty());
}

TEST_F(PullRequestPreviewTest, AHeadWithinTheFileLimitButPastTheBytesIsRefusedToo) {
  ASSERT_NE(flow_, nullptr);
  // 20 profiles of 512 KiB: 10 MiB, within the watched branch's 64 MiB but not 8 MiB.
  const std::string head = PublishHead(20, std::size_t{512} << 10);
  Deliver(Event(PullRequestAction::kOpened, head));
  std::vector<FakeStatus> plans = PlanStatuses(head);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].state, "failure");
  EXPECT_THAT(plans[0].description, HasSubstr("pull request snapshot budget of 8 MiB"));
}

TEST_F(PullRequestPreviewTest, AClosedOrMergedPullRequestsPreviewRefIsDeleted) {
  ASSERT_NE(flow_, nullptr);
  const std::string head = PublishHead(1, 16);
  Deliver(Event(PullRequestAction::kOpened, head));
  EXPECT_TRUE(PreviewRefExists());
  Deliver(Event(PullRequestAction::kClosed, head));
  EXPECT_FALSE(PreviewRefExists());
  // Closing it again finds nothing to delete, and that is no error.
  Deliver(Event(PullRequestAction::kClosed, head));
  EXPECT_FALSE(PreviewRefExists());
  Deliver(Event(PullRequestAction::kReopened, head));
  EXPECT_TRUE(PreviewRefExists());
  Deliver(Event(PullRequestAction::kMerged, head));
  EXPECT_FALSE(PreviewRefExists());
}

// The profile of cluster prod with a schematic of `extensions` at the factory `origin`.
std::string FactoryProfile(const std::string& extensions, const std::string& origin) {
  return "apiVersion: talos-reconciler.dev/v1alpha1\nkind: ClusterProfile\n"
         "metadata: {name: prod}\nspec:\n  endpoints: [127.20.9.1]\n  credentials: prod\n"
         "  talos:\n    version: 1.12.0\n"
         "    schematic: {customization: {systemExtensions: {officialExtensions: [" +
         extensions + "]}}}\n    factory: " + origin +
         "\n  kubernetes: {version: 1.35.0}\n  nodes:\n"
         "    - {name: prod-cp, address: 127.20.9.1, role: controlplane}\n";
}

// The daemon's resolver reaches the flow: a pull request that names a factory of its own (a
// listener counting the connections it gets) is planned with the watched branch's factory.
TEST_F(PullRequestPreviewTest, ASchematicIsResolvedAtTheWatchedBranchsFactoryNotThePullRequests) {
  ASSERT_NE(flow_, nullptr);
  const std::string id(64, 'c');
  std::atomic<int> schematics_posted{0};
  auto routes = std::make_unique<httplib::Server>();
  routes->Post("/schematics", [&](const httplib::Request&, httplib::Response& res) {
    ++schematics_posted;
    res.status = 201;
    res.set_content(R"({"id": ")" + id + "\"}", "application/json");
  });
  routes->Get(R"(/version/v1\.12\.0/extensions/official)", [](const httplib::Request&,
                                                              httplib::Response& res) {
    res.set_content(
        R"([{"name": "siderolabs/iscsi-tools"}, {"name": "siderolabs/qemu-guest-agent"}])",
        "application/json");
  });
  test_support::LoopbackServer ours(std::move(routes));
  test_support::Blackhole theirs("127.0.0.1");
  ASSERT_TRUE(theirs.ok());
  const std::string our_url = "http://127.0.0.1:" + std::to_string(ours.port());
  const std::string their_url = "http://127.0.0.1:" + std::to_string(theirs.port());
  upstream_.Commit({{"clusters/prod.yaml", FactoryProfile("siderolabs/iscsi-tools", our_url)}},
                   "a schematic");
  const std::string head = upstream_.Commit(
      {{"clusters/prod.yaml",
        FactoryProfile("siderolabs/iscsi-tools, siderolabs/qemu-guest-agent", their_url)}},
      "more extensions, elsewhere", "proposal");
  upstream_.GitBare({"update-ref", fmt::format("refs/pull/{}/head", kPull), head});
  factory::FactoryInstallers installers(
      {.origin = "", .ca_file = {}, .timeout = std::chrono::milliseconds(500)}, "",
      "with the daemon's --image-factory");
  PullRequestFlowOptions options;
  options.dialect = forge::FindApiDialect("github");
  options.installers = &installers;
  PullRequestFlow flow(*source_, *source_, *client_, comments_, env_, std::move(options));

  flow.PullRequestChanged(Event(PullRequestAction::kOpened, head));
  // Three threads: this flow's, flow_'s (idle) and the comment writer's.
  ASSERT_TRUE(env_.RunTimersUntil(3, [&] { return flow.Idle() && comments_.Idle(); }));
  std::vector<forge_test::FakeComment> comments = fake_.Comments(kPull);
  ASSERT_EQ(comments.size(), 1u);
  EXPECT_THAT(
      comments[0].body,
      HasSubstr("Schematic: " + id + " (siderolabs/iscsi-tools, siderolabs/qemu-guest-agent)"));
  EXPECT_EQ(schematics_posted, 1);
  EXPECT_EQ(theirs.accepted(), 0);
}

}  // namespace
}  // namespace tr::reconciler::pull_requests
