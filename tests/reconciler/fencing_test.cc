// Fencing tokens on a real status branch (libgit2, a file:// remote): two replicas, each with
// its own mirror and writer guarded as the daemon's is, take one cluster over from each other.
// A replica that lost the cluster while a record of its was in flight cannot land it once its
// successor has claimed the cluster, however its push is retried, and acts no more.
#include <gtest/gtest.h>

#include "core/status_decode.h"
#include "core/status_yaml.h"
#include "gitsource/git_source.h"
#include "gitsource/status_writer.h"
#include "reconciler/features/lease/fencing.h"
#include "reconciler/loop/status_store.h"
#include "tests/reconciler/counting_executor.h"
#include "tests/support/process.h"
#include "tests/support/repos.h"

namespace tr::reconciler::lease {
namespace {

constexpr char kStatusBranch[] = "talos-reconciler/status";

class TermOwnership final : public ClusterOwnership {
 public:
  std::optional<uint64_t> Term(const std::string&) override { return term; }
  std::optional<uint64_t> term;
};

class NoopReconciler final : public ClusterReconciler {
 public:
  ReconcileOutcome Reconcile(const std::string&, std::stop_token) override {
    return ReconcileOutcome::Done();
  }
};

// One replica as the daemon wires it: its own mirror and guarded writer, the fences, the fenced
// store and executor, the sharded reconciler that claims on a new term.
struct Replica {
  Replica(const gitsource::GitSourceConfig& git, const std::string& identity)
      : fences(ownership, identity) {
    auto opened = gitsource::LibGitSource::Open(git, Env::Default());
    EXPECT_TRUE(opened.ok()) << opened.status();
    source = *std::move(opened);
    gitsource::StatusWriterConfig config;
    config.guard = StatusFileGuard;
    auto created = gitsource::GitStatusWriter::Create(*source, config, Env::Default());
    EXPECT_TRUE(created.ok()) << created.status();
    writer = *std::move(created);
    branch.emplace(*writer);
    store.emplace(*branch, fences);
    executor.emplace(counting, fences);
    sharded.emplace(inner, fences, *branch,
                    [this](const std::string&, std::optional<core::ClusterStatus> recorded) {
                      adopted.push_back(recorded ? recorded->message : "none");
                    });
  }

  absl::Status Record(const std::string& message) {
    core::ClusterStatus status;
    status.cluster = "prod";
    status.phase = core::ClusterPhase::kUpgradingTalos;
    status.message = message;
    return store->Record(status, {});
  }
  absl::Status Act() {
    core::ClusterProfile profile;
    profile.name = "prod";
    return executor->Execute(profile, {}, {}).status();
  }

  TermOwnership ownership;
  ClusterFences fences;
  std::unique_ptr<gitsource::LibGitSource> source;
  std::unique_ptr<gitsource::GitStatusWriter> writer;
  std::optional<GitStatusStore> branch;
  std::optional<FencedStatusStore> store;
  CountingExecutor counting;
  std::optional<FencedExecutor> executor;
  NoopReconciler inner;
  std::optional<ShardedReconciler> sharded;
  std::vector<std::string> adopted;
};

class FencingTest : public testing::Test {
 protected:
  FencingTest() { upstream_.Commit({{"clusters/prod.yaml", "kind: ClusterProfile\n"}}, "initial"); }

  std::unique_ptr<Replica> Start(const std::string& identity) {
    gitsource::GitSourceConfig git;
    git.remote.url = "file://" + upstream_.bare().string();
    git.state_dir = tmp_ / identity;
    return std::make_unique<Replica>(git, identity);
  }

  // The cluster's status at the tip of the status branch.
  core::ClusterStatus OnBranch() const {
    const std::string text = upstream_.GitBare({"show", std::string(kStatusBranch) + ":status/prod.yaml"});
    core::Decoded<core::ClusterStatus> decoded = core::DecodeClusterStatus("status/prod.yaml", text);
    EXPECT_TRUE(decoded.ok()) << text;
    return decoded.value.value_or(core::ClusterStatus{});
  }

  gitsource::testing::TempDir tmp_;
  gitsource::testing::UpstreamRepo upstream_{tmp_ / "served", "profiles"};
};

TEST_F(FencingTest, AReplicaThatLostTheClusterCannotLandARecordOverItsSuccessorsClaim) {
  auto a = Start("pod-a");
  a->ownership.term = 1;
  ASSERT_EQ(a->sharded->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kDone);
  ASSERT_TRUE(a->Record("pod-a: 1/3").ok());
  ASSERT_TRUE(a->Record("pod-a: 2/3").ok());  // built on its own last commit, no fetch
  EXPECT_EQ(OnBranch().fence, (core::Fence{1, "pod-a"}));

  // a freezes; b takes the shard, reads the branch and claims the cluster under generation 2.
  auto b = Start("pod-b");
  b->ownership.term = 1;
  ASSERT_EQ(b->sharded->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(b->adopted, std::vector<std::string>{"pod-a: 2/3"});
  EXPECT_EQ(OnBranch().fence, (core::Fence{2, "pod-b"}));
  const std::string claimed = upstream_.Tip(kStatusBranch);

  // a wakes with a record in flight, its last check of the shard passed before the freeze: its
  // push on its own last commit is refused, it fetches, and the guard refuses it on b's claim.
  absl::Status stale = a->Record("pod-a: stale");
  EXPECT_EQ(stale.code(), absl::StatusCode::kAborted) << stale;
  EXPECT_TRUE(IsFenceRefused(stale)) << stale;
  EXPECT_EQ(upstream_.Tip(kStatusBranch), claimed);
  EXPECT_EQ(OnBranch().message, "pod-a: 2/3");
  // Superseded: a neither records nor acts any more in this term, without asking the branch.
  EXPECT_EQ(a->Act().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(a->counting.calls, 0);
  EXPECT_FALSE(IsFenceRefused(a->Record("pod-a: again")));
  EXPECT_EQ(a->Record("pod-a: again").code(), absl::StatusCode::kAborted);
  EXPECT_EQ(upstream_.Tip(kStatusBranch), claimed);

  // b goes on.
  ASSERT_TRUE(b->Record("pod-b: 3/3").ok());
  ASSERT_TRUE(b->Act().ok());
  EXPECT_EQ(OnBranch().message, "pod-b: 3/3");
  EXPECT_EQ(OnBranch().fence, (core::Fence{2, "pod-b"}));

  // a takes the shard back legitimately (a new term): it claims generation 3, and b, frozen in
  // turn, is refused.
  a->ownership.term = 2;
  ASSERT_EQ(a->sharded->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(a->adopted, (std::vector<std::string>{"none", "pod-b: 3/3"}));
  EXPECT_EQ(OnBranch().fence, (core::Fence{3, "pod-a"}));
  EXPECT_TRUE(IsFenceRefused(b->Record("pod-b: stale")));
  ASSERT_TRUE(a->Record("pod-a: done").ok());
  ASSERT_TRUE(a->Act().ok());
  EXPECT_EQ(a->counting.calls, 1);
  EXPECT_EQ(OnBranch().message, "pod-a: done");
}

TEST_F(FencingTest, OfTwoFirstRecordsUnderTheSameGenerationTheFirstWinsAndTheOtherClaimsAnew) {
  // Neither finds a status to claim: both take generation 1.
  auto a = Start("pod-a");
  auto b = Start("pod-b");
  a->ownership.term = 1;
  b->ownership.term = 1;
  ASSERT_EQ(a->sharded->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kDone);
  ASSERT_EQ(b->sharded->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kDone);
  ASSERT_TRUE(a->Record("pod-a: first").ok());
  EXPECT_TRUE(IsFenceRefused(b->Record("pod-b: second")));
  EXPECT_EQ(OnBranch().message, "pod-a: first");
  // b, still holding the shard by its Lease, claims again over what it now reads.
  ASSERT_EQ(b->sharded->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(b->adopted, (std::vector<std::string>{"none", "pod-a: first"}));
  EXPECT_EQ(OnBranch().fence, (core::Fence{2, "pod-b"}));
  ASSERT_TRUE(b->Record("pod-b: second").ok());
  EXPECT_TRUE(IsFenceRefused(a->Record("pod-a: stale")));
  EXPECT_EQ(OnBranch().message, "pod-b: second");
}

TEST_F(FencingTest, AReplicaWithoutTheShardReadsClaimsAndRecordsNothing) {
  auto a = Start("pod-a");
  a->ownership.term = 1;
  ASSERT_EQ(a->sharded->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kDone);
  ASSERT_TRUE(a->Record("pod-a: 1/3").ok());
  auto b = Start("pod-b");
  EXPECT_EQ(b->sharded->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_TRUE(b->adopted.empty());
  EXPECT_EQ(b->Record("pod-b").code(), absl::StatusCode::kAborted);
  EXPECT_EQ(OnBranch().fence, (core::Fence{1, "pod-a"}));
}

std::string StatusText(const std::string& cluster, std::optional<core::Fence> fence) {
  core::ClusterStatus status;
  status.cluster = cluster;
  status.fence = std::move(fence);
  return core::RenderStatusYaml(status);
}

TEST(StatusFileGuardTest, RefusesOnlyAnOlderOrRivalRecordOverAStatusItWouldReadBack) {
  const std::string path = "status/prod.yaml";
  const std::string ours = StatusText("prod", core::Fence{5, "pod-a"});
  EXPECT_EQ(StatusFileGuard(path, std::nullopt, ours), "");
  EXPECT_EQ(StatusFileGuard(path, StatusText("prod", core::Fence{4, "pod-b"}), ours), "");
  EXPECT_EQ(StatusFileGuard(path, StatusText("prod", core::Fence{5, "pod-a"}), ours), "");
  EXPECT_NE(StatusFileGuard(path, StatusText("prod", core::Fence{6, "pod-b"}), ours), "");
  EXPECT_NE(StatusFileGuard(path, StatusText("prod", core::Fence{5, "pod-b"}), ours), "");
  // What a takeover would skip as no status of the cluster does not hold it either: junk,
  // another cluster's status, a generation past the ceiling, one at the ceiling.
  EXPECT_EQ(StatusFileGuard(path, "\x01junk: [", ours), "");
  EXPECT_EQ(StatusFileGuard(path, StatusText("other", core::Fence{9, "pod-b"}), ours), "");
  EXPECT_EQ(StatusFileGuard(path, StatusText("prod", core::Fence{uint64_t{1} << 60, "m"}), ours),
            "");
  EXPECT_EQ(
      StatusFileGuard(path, StatusText("prod", core::Fence{core::kMaxFenceGeneration, "m"}), ours),
      "");
  // A record without a fence (no leader election) and a removal are never refused.
  EXPECT_EQ(StatusFileGuard(path, StatusText("prod", core::Fence{6, "pod-b"}),
                            StatusText("prod", std::nullopt)),
            "");
  EXPECT_EQ(StatusFileGuard(path, StatusText("prod", core::Fence{6, "pod-b"}), std::nullopt), "");
}

}  // namespace
}  // namespace tr::reconciler::lease
