// The proposer's pass without a forge (the branch only, logged), on the replica that proposes
// only, never while a profile is invalid, and never again for a merged proposal; the forge's side
// runs end to end in tests/e2e/proposal_test.cc.
#include "reconciler/features/proposals/proposer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/profile_set.h"
#include "fmt/format.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler::proposals {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string LabProfile(const std::string& talos) {
  return fmt::format(R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: ClusterProfile
metadata: {{name: lab}}
spec:
  endpoints: [10.0.0.11]
  credentials: lab
  talos:
    version: {}  # kept as written
    image: ghcr.io/siderolabs/installer
  kubernetes: {{version: 1.34.1}}
  nodes:
    - {{name: cp-0, address: 10.0.0.11, role: controlplane}}
  updates: {{talos: minor}}
)",
                     talos);
}

class FixedFiles final : public gitsource::GitSource {
 public:
  explicit FixedFiles(std::vector<core::SourceFile> files) : files_(std::move(files)) {}
  absl::StatusOr<gitsource::RemoteHead> Poll(std::stop_token) override {
    return absl::UnimplementedError("not in this test");
  }
  absl::StatusOr<gitsource::ProfileSnapshot> Snapshot(std::string_view commit) override {
    EXPECT_EQ(commit, std::string(40, 'c'));
    return gitsource::ProfileSnapshot{{}, files_};
  }

 private:
  std::vector<core::SourceFile> files_;
};

class RunningLab final : public StatusStore {
 public:
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadAll(std::stop_token) override {
    core::ClusterStatus lab;
    lab.cluster = "lab";
    core::NodeStatus node;
    node.name = "cp-0";
    node.talos = "1.11.6";
    node.kubelet = "1.34.1";
    lab.nodes = {node};
    return std::map<std::string, core::ClusterStatus>{{"lab", lab}};
  }
  absl::Status Record(const core::ClusterStatus&, std::stop_token) override {
    return absl::UnimplementedError("the proposer records no status");
  }
};

class RecordingPublisher final : public gitsource::ProposalPublisher {
 public:
  absl::StatusOr<gitsource::ProposalPush> Publish(const gitsource::ProposalCommit& proposal,
                                                  std::stop_token) override {
    published.push_back(proposal);
    return gitsource::ProposalPush{std::string(40, 'e'), true};
  }
  std::vector<gitsource::ProposalCommit> published;
};

// The pull-request calls of a forge over a list of pull requests, newest first.
class PullList final : public forge::ForgeApi {
 public:
  absl::StatusOr<std::optional<forge::ForgeComment>> FindComment(int64_t, std::string_view,
                                                                 std::stop_token) override {
    return absl::UnimplementedError("the proposer reads no comment");
  }
  absl::StatusOr<int64_t> CreateComment(int64_t, const std::string&, std::stop_token) override {
    return absl::UnimplementedError("the proposer writes no comment");
  }
  absl::Status EditComment(int64_t, int64_t, const std::string&, std::stop_token) override {
    return absl::UnimplementedError("the proposer writes no comment");
  }
  absl::Status SetCommitStatus(const forge::CommitStatus&, std::stop_token) override {
    return absl::UnimplementedError("the proposer sets no commit status");
  }
  absl::StatusOr<std::optional<int64_t>> MergedPullOf(const std::string&,
                                                      std::stop_token) override {
    return absl::UnimplementedError("the proposer asks for no commit's pull request");
  }
  absl::StatusOr<std::vector<forge::ForgePull>> PullsFromBranch(const std::string& head,
                                                                std::stop_token) override {
    std::vector<forge::ForgePull> found;
    for (const forge::ForgePull& p : pulls) {
      if (p.head_branch == head) found.push_back(p);
    }
    return found;
  }
  absl::StatusOr<forge::ForgePull> CreatePull(const forge::PullDraft& draft,
                                              std::stop_token) override {
    forge::ForgePull pull{.number = static_cast<int64_t>(pulls.size()) + 1,
                          .state = "open",
                          .title = draft.title,
                          .body = draft.body,
                          .head_branch = draft.head_branch,
                          .base_branch = draft.base_branch,
                          .url = ""};
    pulls.insert(pulls.begin(), pull);
    return pull;
  }
  absl::Status EditPull(int64_t number, const std::string& title, const std::string& body,
                        std::stop_token) override {
    for (forge::ForgePull& p : pulls) {
      if (p.number != number) continue;
      p.title = title;
      p.body = body;
      return absl::OkStatus();
    }
    return absl::NotFoundError("no such pull request");
  }
  std::vector<forge::ForgePull> pulls;
};

class ProposerTest : public ::testing::Test {
 protected:
  void Publish(const std::vector<core::SourceFile>& files) {
    auto snapshot = std::make_shared<DesiredSnapshot>();
    snapshot->commit = std::string(40, 'c');
    snapshot->profiles = core::DecodeProfileSet(files);
    desired_.Publish(std::move(snapshot));
    source_ = std::make_unique<FixedFiles>(files);
  }

  std::unique_ptr<Proposer> Make(std::function<bool()> proposes = {},
                                 forge::ForgeApi* forge = nullptr) {
    return std::make_unique<Proposer>(ProposerDeps{desired_,
                                                   *source_,
                                                   statuses_,
                                                   publisher_,
                                                   forge,
                                                   nullptr,
                                                   std::move(proposes),
                                                   {},
                                                   metrics_,
                                                   env_,
                                                   &board_},
                                      ProposerOptions{});
  }

  const std::vector<core::SourceFile> lab_{
      {.path = "clusters/lab.yaml", .content = LabProfile("1.11.6"), .oversized = false}};
  DesiredState desired_;
  std::unique_ptr<FixedFiles> source_;
  RunningLab statuses_;
  RecordingPublisher publisher_;
  Metrics metrics_;
  test_support::SimulatedEnv env_;  // the proposer's clock: a pass is at a fixed moment
  ProposalBoard board_;
};

TEST_F(ProposerTest, WithoutAForgeTheBranchIsPushedAndLogged) {
  Publish(lab_);
  const std::vector<std::string> lines = Make()->RunOnce({});
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("branch=talos-reconciler/update/lab commit=eeeeeeeeeeee "
                                  "pushed=true pull=none reason=\"no --forge\""));
  ASSERT_EQ(publisher_.published.size(), 1u);
  const gitsource::ProposalCommit& commit = publisher_.published[0];
  EXPECT_EQ(commit.branch, "talos-reconciler/update/lab");
  EXPECT_EQ(commit.base_commit, std::string(40, 'c'));
  EXPECT_THAT(commit.message, HasSubstr("Upgrade lab to Talos 1.12.0\n\n<!-- "));
  ASSERT_EQ(commit.files.size(), 1u);
  EXPECT_EQ(commit.files.at("clusters/lab.yaml"), LabProfile("1.12.0"));
  ASSERT_TRUE(board_.For("lab").has_value());
  EXPECT_EQ(board_.For("lab")->branch, "talos-reconciler/update/lab");
  EXPECT_EQ(board_.For("lab")->talos, "1.12.0");
  EXPECT_EQ(board_.For("lab")->pull_request, 0);
}

TEST_F(ProposerTest, OnlyTheReplicaThatProposesActsAndShows) {
  Publish(lab_);
  bool proposes = true;
  auto proposer = Make([&] { return proposes; });
  EXPECT_THAT(proposer->RunOnce({}), ::testing::SizeIs(1));
  EXPECT_TRUE(board_.For("lab").has_value());
  proposes = false;
  EXPECT_THAT(proposer->RunOnce({}), IsEmpty());
  EXPECT_EQ(publisher_.published.size(), 1u);
  EXPECT_FALSE(board_.For("lab").has_value());
}

TEST_F(ProposerTest, NothingIsProposedWhileAProfileIsInvalid) {
  std::vector<core::SourceFile> files = lab_;
  files.push_back(
      {.path = "clusters/prod.yaml", .content = "kind: nonsense\n", .oversized = false});
  Publish(files);
  EXPECT_THAT(Make()->RunOnce({}),
              ElementsAre("result=skipped reason=\"a profile or reconciler.yaml is invalid\""));
  EXPECT_THAT(publisher_.published, IsEmpty());
}

// The forge says the proposal is merged before the daemon has read the merge from the watched
// branch: the same proposal is not opened again, and it counts as merged.
TEST_F(ProposerTest, AMergedProposalIsNotOpenedAgainBeforeTheWatchedBranchShowsIt) {
  Publish(lab_);
  PullList forge;
  auto proposer = Make({}, &forge);
  EXPECT_THAT(proposer->RunOnce({}), ElementsAre(HasSubstr("pull=1 result=opened")));
  ASSERT_EQ(forge.pulls.size(), 1u);
  forge.pulls[0].state = "merged";
  EXPECT_THAT(proposer->RunOnce({}),
              ElementsAre("branch=talos-reconciler/update/lab result=merged pull=1 "
                          "reason=\"merged; waiting for the watched branch to include it\""));
  EXPECT_EQ(forge.pulls.size(), 1u);
  EXPECT_EQ(metrics_.proposals.Value("merged"), 1);
  EXPECT_EQ(metrics_.proposals.Value("open"), 0);
  // A proposal of other versions is a new one.
  forge.pulls[0].body = "<!-- talos-reconciler:proposal group=lab talos=1.11.9 kubernetes=- -->";
  EXPECT_THAT(proposer->RunOnce({}), ElementsAre(HasSubstr("pull=2 result=opened")));
  EXPECT_EQ(metrics_.proposals.Value("open"), 1);
}

}  // namespace
}  // namespace tr::reconciler::proposals
