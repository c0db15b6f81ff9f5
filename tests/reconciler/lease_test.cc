// Leases, leader election, sharding and fencing through the real HTTPS Kubernetes client against
// the simulator's Kubernetes API (resourceVersion conflicts and all). Each replica has a
// simulated clock of its own, moved by the test, so lease expiry takes no real time and the
// replicas' clocks need not agree.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/shards.h"
#include "fmt/format.h"
#include "reconciler/clients/kube/http_kube_client.h"
#include "reconciler/clients/kube/kubeconfig.h"
#include "reconciler/features/lease/fencing.h"
#include "reconciler/features/lease/lease_client.h"
#include "reconciler/features/lease/shard_elector.h"
#include "tests/reconciler/counting_executor.h"
#include "tests/sim/fleet.h"
#include "tests/sim/catalog/fleet_spec.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler::lease {
namespace {

using namespace std::chrono_literals;
using test_support::SimulatedEnv;

constexpr const char* kFleet = R"(
time_scale: 0.002
clusters:
  - name: home
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
)";

// A replica: its clock, and its elector over its own connection.
struct Replica {
  Replica(kube::KubeClient& kube, const std::string& identity, int shards)
      : leases(kube, "ops"),
        elector(leases, {"talos-reconciler", identity, shards, {15s, 10s, 2s}}, env) {}
  SimulatedEnv env;
  LeaseClient leases;
  ShardElector elector;
};

// Counts the node operations that got through.
class CountingStore final : public StatusStore {
 public:
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadAll(std::stop_token) override {
    return std::map<std::string, core::ClusterStatus>{};
  }
  absl::Status Record(const core::ClusterStatus&, std::stop_token) override {
    ++records;
    return absl::OkStatus();
  }
  int records = 0;
};

class LeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lease-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto fleet = sim::Fleet::Start(*sim::FleetSpec::Parse(kFleet), dir_);
    ASSERT_TRUE(fleet.ok()) << fleet.status();
    fleet_ = std::move(*fleet);
    std::ifstream in(fleet_->Cluster("home")->kubeconfig);
    std::stringstream text;
    text << in.rdbuf();
    credentials_ = *kube::ParseKubeconfig(text.str());
  }
  void TearDown() override {
    replicas_.clear();
    clients_.clear();
    fleet_.reset();
    std::filesystem::remove_all(dir_);
  }
  Replica& AddReplica(const std::string& identity, int shards = 1) {
    clients_.push_back(*kube::NewHttpKubeClient(credentials_, Env::Default()));
    replicas_.push_back(std::make_unique<Replica>(*clients_.back(), identity, shards));
    return *replicas_.back();
  }
  // One retry period on each of `alive`'s clocks, and a round of each.
  static void Round(const std::vector<Replica*>& alive) {
    for (Replica* r : alive) {
      r->env.Advance(2s);
      r->elector.Tick();
    }
  }
  static std::vector<int> Held(Replica& r) { return r.elector.Held(r.env.Now()); }

  kube::KubeClient& kube() {
    if (clients_.empty())
      clients_.push_back(*kube::NewHttpKubeClient(credentials_, Env::Default()));
    return *clients_.front();
  }

  std::filesystem::path dir_;
  std::unique_ptr<sim::Fleet> fleet_;
  kube::KubeCredentials credentials_;
  std::vector<std::unique_ptr<kube::KubeClient>> clients_;
  std::vector<std::unique_ptr<Replica>> replicas_;
};

TEST_F(LeaseTest, ClientMapsTheApiServersAnswers) {
  LeaseClient leases(kube(), "ops");
  absl::StatusOr<std::optional<LeaseRecord>> none = leases.Get("lock");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
  LeaseRecord record;
  record.holder = "pod-a";
  record.renew_time = Env::TimePoint{} + 1'700'000'000s + 123456us;
  absl::StatusOr<LeaseRecord> created = leases.Create("lock", record);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_FALSE(created->resource_version.empty());
  EXPECT_EQ(created->renew_time, record.renew_time);  // microseconds kept
  EXPECT_EQ(FormatMicroTime(*record.renew_time), "2023-11-14T22:13:20.123456Z");
  EXPECT_EQ(leases.Create("lock", record).status().code(), absl::StatusCode::kAlreadyExists);
  LeaseRecord renewed = *created;
  renewed.renew_time = *record.renew_time + 2s;
  ASSERT_TRUE(leases.Update("lock", renewed).ok());
  // `renewed` still carries the version it was based on: a second writer with it loses.
  EXPECT_EQ(leases.Update("lock", renewed).status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(leases.Update("absent", renewed).status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<std::optional<LeaseRecord>> read = leases.Get("lock");
  ASSERT_TRUE(read.ok() && read->has_value());
  EXPECT_EQ((*read)->renew_time, renewed.renew_time);
  EXPECT_EQ(ParseMicroTime("nonsense").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(LeaseTest, OneLeaderUntilItStopsRenewingThenTheOtherTakesOver) {
  Replica& a = AddReplica("pod-a");
  Replica& b = AddReplica("pod-b");
  a.elector.Tick();
  b.elector.Tick();
  ASSERT_TRUE(a.elector.Holding(0, a.env.Now()).has_value());
  EXPECT_FALSE(b.elector.Holding(0, b.env.Now()).has_value());
  // a renews every retry period; b never gets it.
  for (int i = 0; i < 10; ++i) {
    a.env.Advance(2s);
    b.env.Advance(2s);
    a.elector.Tick();
    b.elector.Tick();
    ASSERT_TRUE(a.elector.Holding(0, a.env.Now())) << i;
    ASSERT_FALSE(b.elector.Holding(0, b.env.Now())) << i;
  }
  // a stops (a kill -9: no release). b waits a lease duration from the last change it saw.
  b.env.Advance(14s);
  b.elector.Tick();
  EXPECT_FALSE(b.elector.Holding(0, b.env.Now()));
  b.env.Advance(2s);
  b.elector.Tick();
  ASSERT_TRUE(b.elector.Holding(0, b.env.Now()));
  absl::StatusOr<std::optional<LeaseRecord>> lease = b.leases.Get("talos-reconciler");
  ASSERT_TRUE(lease.ok() && lease->has_value());
  EXPECT_EQ((*lease)->holder, "pod-b");
  EXPECT_EQ((*lease)->transitions, 1);
  EXPECT_EQ((*lease)->duration, 15s);
  // a's own clock: past its renew deadline it no longer claims the lease, even unaware of b.
  a.env.Advance(10s);
  EXPECT_FALSE(a.elector.Holding(0, a.env.Now()));
  a.elector.Tick();
  EXPECT_FALSE(a.elector.Holding(0, a.env.Now()));
}

TEST_F(LeaseTest, ADeposedLeaderRefusesToActOrRecord) {
  Replica& a = AddReplica("pod-a");
  Replica& b = AddReplica("pod-b");
  CountingExecutor executor;
  CountingStore store;
  ClusterFences fences(a.elector, "pod-a");
  FencedExecutor fenced(executor, fences);
  FencedStatusStore fenced_store(store, fences);
  core::ClusterProfile profile;
  profile.name = "prod";
  core::ClusterStatus status;
  status.cluster = "prod";
  a.elector.Tick();
  fences.Claimed("prod", *a.elector.Term("prod"), {1, "pod-a"});
  ASSERT_TRUE(fenced.Execute(profile, {}, {}).ok());
  ASSERT_TRUE(fenced_store.Record(status, {}).ok());
  // a is paused (no renewals) past its renew deadline; b takes over after the lease duration.
  a.env.Advance(11s);
  b.elector.Tick();
  b.env.Advance(16s);
  b.elector.Tick();
  ASSERT_TRUE(b.elector.Holding(0, b.env.Now()));
  // a wakes up: before it even reads the lease again, its deadline has passed.
  EXPECT_EQ(fenced.Execute(profile, {}, {}).status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(fenced_store.Record(status, {}).code(), absl::StatusCode::kAborted);
  EXPECT_EQ(executor.calls, 1);
  EXPECT_EQ(store.records, 1);
}

TEST_F(LeaseTest, ALeaseLostMidRolloutStopsActingAtOnce) {
  Replica& a = AddReplica("pod-a");
  CountingExecutor executor;
  ClusterFences fences(a.elector, "pod-a");
  FencedExecutor fenced(executor, fences);
  core::ClusterProfile profile;
  profile.name = "prod";
  a.elector.Tick();
  fences.Claimed("prod", *a.elector.Term("prod"), {1, "pod-a"});
  ASSERT_TRUE(fenced.Execute(profile, {}, {}).ok());
  // Someone else (an operator, another replica whose clock ran ahead) writes the lease while a
  // is well within its renew deadline: a's next round sees it and stops at once.
  absl::StatusOr<std::optional<LeaseRecord>> lease = a.leases.Get("talos-reconciler");
  ASSERT_TRUE(lease.ok() && lease->has_value());
  LeaseRecord stolen = **lease;
  stolen.holder = "pod-z";
  ASSERT_TRUE(a.leases.Update("talos-reconciler", stolen).ok());
  a.env.Advance(2s);
  ASSERT_TRUE(fenced.Execute(profile, {}, {}).ok());  // not seen yet, still within the margin
  a.elector.Tick();
  EXPECT_FALSE(a.elector.Holding(0, a.env.Now()));
  EXPECT_EQ(fenced.Execute(profile, {}, {}).status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(executor.calls, 2);
}

TEST_F(LeaseTest, ReleaseOnShutdownHandsOverWithoutWaiting) {
  Replica& a = AddReplica("pod-a");
  Replica& b = AddReplica("pod-b");
  a.elector.Tick();
  b.elector.Tick();
  std::stop_source stop;
  stop.request_stop();
  a.elector.Run(stop.get_token());  // one round, then gives the lease back
  EXPECT_FALSE(a.elector.Holding(0, a.env.Now()));
  absl::StatusOr<std::optional<LeaseRecord>> lease = a.leases.Get("talos-reconciler");
  ASSERT_TRUE(lease.ok() && lease->has_value());
  EXPECT_EQ((*lease)->holder, "");
  b.env.Advance(2s);
  b.elector.Tick();
  EXPECT_TRUE(b.elector.Holding(0, b.env.Now()));
}

TEST_F(LeaseTest, ShardsAreSharedAndMoveWhenAReplicaDies) {
  constexpr int kShards = 4;
  std::vector<Replica*> replicas = {&AddReplica("pod-a", kShards), &AddReplica("pod-b", kShards),
                                    &AddReplica("pod-c", kShards)};
  auto round = [&](const std::vector<Replica*>& alive, std::chrono::seconds step = 2s) {
    for (Replica* r : alive) {
      r->env.Advance(step);
      r->elector.Tick();
    }
  };
  // Owners of each shard; every shard held by exactly one replica.
  auto owners = [&](const std::vector<Replica*>& alive) {
    std::vector<int> held(kShards, 0);
    std::map<Replica*, int> count;
    for (Replica* r : alive) {
      for (int shard : r->elector.Held(r->env.Now())) {
        ++held[static_cast<size_t>(shard)];
        ++count[r];
      }
    }
    for (int shard = 0; shard < kShards; ++shard) {
      EXPECT_EQ(held[static_cast<size_t>(shard)], 1) << "shard " << shard;
    }
    return count;
  };
  for (int i = 0; i < 4; ++i) round(replicas);
  std::map<Replica*, int> shares = owners(replicas);
  for (Replica* r : replicas) {
    EXPECT_GE(shares[r], 1) << r->elector.options().identity;
    EXPECT_LE(shares[r], 2) << r->elector.options().identity;
  }
  // The replica with the most shards dies; its shards expire and move to the others.
  Replica* dead = replicas[0];
  for (Replica* r : replicas) {
    if (shares[r] > shares[dead]) dead = r;
  }
  std::vector<Replica*> alive;
  for (Replica* r : replicas) {
    if (r != dead) alive.push_back(r);
  }
  // Rounds 8 s apart (within the renew deadline): the dead one's leases expire in the second.
  for (int i = 0; i < 5; ++i) round(alive, 8s);
  shares = owners(alive);
  for (Replica* r : alive) EXPECT_EQ(shares[r], 2) << r->elector.options().identity;
  // The ownership seen by the reconciler follows the shard of each cluster.
  for (const char* cluster : {"prod-eu-1", "prod-us-1", "staging"}) {
    const int shard = core::ShardOf(cluster, kShards);
    int holders = 0;
    for (Replica* r : alive) holders += r->elector.Term(cluster).has_value() ? 1 : 0;
    EXPECT_EQ(holders, 1) << cluster << " (shard " << shard << ")";
  }
}

// A replica killed with its membership Lease just renewed: that Lease counts it for a lease
// duration plus the skew margin, longer than its shard Lease lasts. Once a survivor took the
// expired shard, the dead replica (holding nothing) must not look starving: no survivor gives
// a shard back to it, each keeps every shard it holds.
TEST_F(LeaseTest, NoShardIsGivenBackToAReplicaKilledWithItsMembershipLeaseFresh) {
  constexpr int kShards = 4;
  std::vector<Replica*> replicas = {&AddReplica("pod-a", kShards), &AddReplica("pod-b", kShards),
                                    &AddReplica("pod-c", kShards)};
  auto round = [](const std::vector<Replica*>& alive) {
    for (Replica* r : alive) {
      r->env.Advance(2s);
      r->elector.Tick();
    }
  };
  for (int i = 0; i < 4; ++i) round(replicas);
  // Kill a replica holding one shard (the shares are 2/1/1).
  Replica* dead = nullptr;
  std::vector<Replica*> alive;
  for (Replica* r : replicas) {
    if (!dead && r->elector.Held(r->env.Now()).size() == 1) {
      dead = r;
    } else {
      alive.push_back(r);
    }
  }
  ASSERT_NE(dead, nullptr);
  // Lease 15 s, the membership Lease counts for 15 + 5 s: rounds until both ran out.
  std::map<Replica*, std::vector<int>> before;
  for (Replica* r : alive) before[r] = r->elector.Held(r->env.Now());
  for (int i = 0; i < 11; ++i) {
    round(alive);
    for (Replica* r : alive) {
      const std::vector<int> now = r->elector.Held(r->env.Now());
      for (int shard : before[r]) {
        EXPECT_TRUE(std::find(now.begin(), now.end(), shard) != now.end())
            << r->elector.options().identity << " gave back shard " << shard << " in round " << i;
      }
      before[r] = now;
    }
  }
  for (Replica* r : alive) {
    EXPECT_EQ(r->elector.Held(r->env.Now()).size(), 2u) << r->elector.options().identity;
    EXPECT_EQ(r->elector.Replicas(), 2) << r->elector.options().identity;
  }
}

// Runs `during` in the middle of each node operation.
class CallbackExecutor final : public RolloutExecutor {
 public:
  absl::StatusOr<ActionResult> Execute(const core::ClusterProfile&, const core::RolloutDecision&,
                                       std::stop_token) override {
    during();
    return ActionResult{};
  }
  std::function<void()> during;
};

TEST_F(LeaseTest, AReplicaStartedLaterIsHandedAShareBetweenNodeOperations) {
  constexpr int kShards = 4;
  Replica& a = AddReplica("pod-a", kShards);
  Replica& b = AddReplica("pod-b", kShards);
  for (int i = 0; i < 3; ++i) Round({&a, &b});
  ASSERT_EQ(Held(a).size(), 2u);
  ASSERT_EQ(Held(b).size(), 2u);
  // c starts later, on a clock like the others'. a and b both hold ceil(4/3) = 2, c none:
  // a (the most, the smaller name) gives back its highest shard — but not mid-operation.
  Replica& c = AddReplica("pod-c", kShards);
  c.env.Advance(a.env.Now() - c.env.Now());
  const int top = Held(a).back();
  std::string cluster;
  for (int i = 0; cluster.empty(); ++i) {
    if (core::ShardOf(fmt::format("prod-{}", i), kShards) == top) cluster = fmt::format("prod-{}", i);
  }
  core::ClusterProfile profile;
  profile.name = cluster;
  CallbackExecutor executor;
  ClusterFences fences(a.elector, "pod-a");
  fences.Claimed(cluster, *a.elector.Term(cluster), {1, "pod-a"});
  FencedExecutor fenced(executor, fences);
  int rounds_during = 0;
  executor.during = [&] {
    // c is counted from the second round on (its member Lease is written in its own round).
    for (int i = 0; i < 2; ++i, ++rounds_during) {
      Round({&a, &b, &c});
      EXPECT_TRUE(a.elector.Holding(top, a.env.Now())) << "given back mid-operation, round " << i;
      EXPECT_TRUE(Held(c).empty());
      EXPECT_EQ(c.elector.Replicas(), 3);  // c is counted although it holds nothing
    }
  };
  ASSERT_TRUE(fenced.Execute(profile, {}, {}).ok());
  EXPECT_EQ(rounds_during, 2);
  // The operation ended: the next round hands the shard over, and the shares stay.
  for (int i = 0; i < 2; ++i) Round({&a, &b, &c});
  EXPECT_EQ(Held(a).size(), 1u);
  EXPECT_EQ(Held(b).size(), 2u);
  EXPECT_EQ(Held(c), std::vector<int>{top});
  EXPECT_FALSE(a.elector.Term(cluster).has_value());
  EXPECT_TRUE(c.elector.Term(cluster).has_value());
  // a leaves on shutdown: its member Lease is given back with its shards, c and b share 4.
  std::stop_source stop;
  stop.request_stop();
  a.elector.Run(stop.get_token());
  for (int i = 0; i < 2; ++i) Round({&b, &c});
  EXPECT_EQ(Held(b).size(), 2u);
  EXPECT_EQ(Held(c).size(), 2u);
  EXPECT_EQ(b.elector.Replicas(), 2);
  absl::StatusOr<std::vector<std::pair<std::string, LeaseRecord>>> members =
      a.leases.List("talos-reconciler/election=talos-reconciler");
  ASSERT_TRUE(members.ok()) << members.status();
  std::map<std::string, std::string> holders;
  for (const auto& [name, record] : *members) holders[name] = record.holder;
  EXPECT_EQ(holders, (std::map<std::string, std::string>{{"talos-reconciler-member-pod-a", ""},
                                                         {"talos-reconciler-member-pod-b", "pod-b"},
                                                         {"talos-reconciler-member-pod-c", "pod-c"}}));
}

// Between two node calls nothing is under way in the process, but the rollout's operation is
// in flight (recorded, its node rebooting): the shard is not given back until it completes.
TEST_F(LeaseTest, AShardIsNotGivenBackWhileAClusterOfItHasAnOperationInFlight) {
  constexpr int kShards = 4;
  Replica& a = AddReplica("pod-a", kShards);
  Replica& b = AddReplica("pod-b", kShards);
  for (int i = 0; i < 3; ++i) Round({&a, &b});
  ASSERT_EQ(Held(a).size(), 2u);
  const int top = Held(a).back();  // the one a would give back
  bool in_flight = true;
  std::vector<int> asked;
  a.elector.OperationsInFlight([&](int shard) {
    asked.push_back(shard);
    return in_flight && shard == top;
  });
  // c starts later: a (most shards, smaller name) would give back `top` from c's second round.
  Replica& c = AddReplica("pod-c", kShards);
  c.env.Advance(a.env.Now() - c.env.Now());
  for (int i = 0; i < 5; ++i) {
    Round({&a, &b, &c});
    EXPECT_TRUE(a.elector.Holding(top, a.env.Now())) << "given back in flight, round " << i;
    EXPECT_TRUE(Held(c).empty()) << i;
  }
  EXPECT_FALSE(asked.empty());
  // The node completed: the next round hands the shard over.
  in_flight = false;
  for (int i = 0; i < 2; ++i) Round({&a, &b, &c});
  EXPECT_EQ(Held(a).size(), 1u);
  EXPECT_EQ(Held(c), std::vector<int>{top});
}

// Ownership set by the test.
class FixedOwnership final : public ClusterOwnership {
 public:
  std::optional<uint64_t> Term(const std::string&) override { return term; }
  std::optional<uint64_t> term;
};

class RecordingReconciler final : public ClusterReconciler {
 public:
  ReconcileOutcome Reconcile(const std::string& cluster, std::stop_token) override {
    reconciled.push_back(cluster);
    return ReconcileOutcome::RequeueAfter(1s);
  }
  std::vector<std::string> reconciled;
};

class BranchStore final : public StatusStore {
 public:
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadAll(std::stop_token) override {
    ++loads;
    return branch;
  }
  absl::Status Record(const core::ClusterStatus&, std::stop_token) override {
    return absl::OkStatus();
  }
  std::map<std::string, core::ClusterStatus> branch;
  int loads = 0;
};

// Ownership that counts the actions under way, as the shard elector does for its give-backs.
class ActingOwnership final : public ClusterOwnership {
 public:
  std::optional<uint64_t> Term(const std::string&) override { return term; }
  bool BeginActing(const std::string& cluster) override {
    if (!Term(cluster)) return false;
    ++acting;
    return true;
  }
  void EndActing(const std::string&) override { --acting; }
  std::optional<uint64_t> term;
  int acting = 0;
};

// A store that notes how many actions were under way while it recorded.
class ActingProbeStore final : public StatusStore {
 public:
  explicit ActingProbeStore(const ActingOwnership& ownership) : ownership_(ownership) {}
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadAll(std::stop_token) override {
    return std::map<std::string, core::ClusterStatus>{};
  }
  absl::Status Record(const core::ClusterStatus&, std::stop_token) override {
    acting_seen.push_back(ownership_.acting);
    return absl::OkStatus();
  }
  std::vector<int> acting_seen;

 private:
  const ActingOwnership& ownership_;
};

// A record is pushed as an action under way, so the shard is not given back in the middle of it
// (a record checked before a give-back and pushed after it would overwrite the new holder's).
TEST(FencedStatusStoreTest, ARecordIsAnActionUnderWayAndRefusedWhenNotHeld) {
  ActingOwnership ownership;
  ActingProbeStore inner(ownership);
  ClusterFences fences(ownership, "pod-a");
  lease::FencedStatusStore store(inner, fences);
  core::ClusterStatus status;
  status.cluster = "lab";
  ownership.term = 3;
  fences.Claimed("lab", 3, {1, "pod-a"});
  ASSERT_TRUE(store.Record(status, {}).ok());
  EXPECT_EQ(inner.acting_seen, std::vector<int>{1});
  EXPECT_EQ(ownership.acting, 0);
  ownership.term.reset();
  EXPECT_EQ(store.Record(status, {}).code(), absl::StatusCode::kAborted);
  EXPECT_EQ(inner.acting_seen.size(), 1u) << "a record of a shard not held reached the branch";
}

TEST(ShardedReconcilerTest, SkipsClustersNotHeldAndReadsTheBranchOnEachNewTerm) {
  FixedOwnership ownership;
  RecordingReconciler inner;
  BranchStore branch;
  branch.branch["prod"].cluster = "prod";
  branch.branch["prod"].message = "upgrading w-1 (by the previous holder)";
  std::vector<std::pair<std::string, std::string>> adopted;
  std::vector<std::string> not_held;
  ClusterFences fences(ownership, "pod-a");
  ShardedReconciler sharded(
      inner, fences, branch,
      [&](const std::string& cluster, std::optional<core::ClusterStatus> s) {
        adopted.emplace_back(cluster, s ? s->message : "none");
      },
      [&](const std::string& cluster) { not_held.push_back(cluster); });
  EXPECT_EQ(sharded.Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_TRUE(inner.reconciled.empty());
  EXPECT_EQ(not_held, std::vector<std::string>{"prod"});  // its nodes are not followed here
  EXPECT_EQ(branch.loads, 0);
  ownership.term = 1;
  EXPECT_EQ(sharded.Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_EQ(sharded.Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_EQ(branch.loads, 1);  // once per term
  ownership.term = 2;          // lost and taken again: another replica may have acted meanwhile
  EXPECT_EQ(sharded.Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_EQ(sharded.Reconcile("staging", {}).kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_EQ(branch.loads, 3);
  using Adopted = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(adopted, (Adopted{{"prod", "upgrading w-1 (by the previous holder)"},
                              {"prod", "upgrading w-1 (by the previous holder)"},
                              {"staging", "none"}}));
  EXPECT_EQ(inner.reconciled, (std::vector<std::string>{"prod", "prod", "prod", "staging"}));
  EXPECT_EQ(not_held.size(), 1u) << "a cluster held was said not to be";
}

}  // namespace
}  // namespace tr::reconciler::lease
