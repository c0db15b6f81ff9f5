#include "reconciler/loop/rollout_reconciler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "core/status_yaml.h"
#include "reconciler/clients/kube/drain.h"
#include "reconciler/clients/registry/installer_tags.h"
#include "reconciler/clients/talos/talos_answers.h"
#include "reconciler/operations/background_steps.h"
#include "reconciler/runtime/logging.h"
#include "spdlog/sinks/ostream_sink.h"
#include "tests/support/rollout_world.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler {
namespace {

using core::testing_fixtures::FiveNodes;
using core::testing_fixtures::MakeObserved;
using core::testing_fixtures::MakeProfile;
using core::testing_fixtures::RolloutWorld;
using ::testing::HasSubstr;
using ::testing::Not;

// The simulated nodes of tests/core, seen through the reconciler's interfaces.
class WorldClock final : public tr::test_support::SimulatedEnv {
 public:
  explicit WorldClock(RolloutWorld& world) : world_(world) {}
  TimePoint Now() override { return world_.now(); }

 private:
  RolloutWorld& world_;
};

class WorldObserver final : public FleetObserver {
 public:
  explicit WorldObserver(RolloutWorld& world) : world_(world) {}
  absl::StatusOr<core::ObservedCluster> Observe(const core::ClusterProfile&) override {
    if (!error.ok()) return error;
    ++full_looks;
    return world_.observed();
  }
  absl::StatusOr<core::ObservedCluster> ObserveNodes(
      const core::ClusterProfile&, const std::vector<std::string>& nodes) override {
    if (!error.ok()) return error;
    followed.insert(followed.end(), nodes.begin(), nodes.end());
    core::ObservedCluster some = world_.observed();
    std::erase_if(some.nodes, [&](const core::NodeObservation& n) {
      return std::find(nodes.begin(), nodes.end(), n.name) == nodes.end();
    });
    return some;
  }
  absl::StatusOr<core::ObservedCluster> ObserveNodesWithoutEtcd(
      const core::ClusterProfile& profile, const std::vector<std::string>& nodes) override {
    absl::StatusOr<core::ObservedCluster> some = ObserveNodes(profile, nodes);
    if (!some.ok()) return some;
    for (core::NodeObservation& node : some->nodes) {
      node.etcd_member = node.etcd_healthy = node.etcd_leader = false;
    }
    some->etcd_observed = false;
    return some;
  }
  // As the Talos observer: the control planes' etcd fields say nothing until ObserveEtcd.
  absl::StatusOr<core::ObservedCluster> ObserveWithoutEtcd(
      const core::ClusterProfile& profile) override {
    absl::StatusOr<core::ObservedCluster> seen = Observe(profile);
    if (!seen.ok()) return seen;
    ++looks_without_etcd;
    for (core::NodeObservation& node : seen->nodes) {
      node.etcd_member = node.etcd_healthy = node.etcd_leader = false;
    }
    seen->etcd_observed = false;
    return seen;
  }
  absl::Status ObserveEtcd(const core::ClusterProfile& profile,
                           core::ObservedCluster& observed) override {
    if (observed.etcd_observed) return absl::OkStatus();  // as the Talos observer
    ++etcd_looks;
    const core::ObservedCluster now = world_.observed();
    const bool partial = observed.nodes.size() < profile.nodes.size();
    const auto& told = world_.reboots_into_upgrade();
    for (core::NodeObservation& node : observed.nodes) {
      if (partial) {
        const auto upgrades = told.find(node.name);
        etcd_followed.push_back(
            {node.name, upgrades == told.end() ? 0 : upgrades->second,
             static_cast<int>(std::count(node.boot_id.begin(), node.boot_id.end(), '+'))});
      }
      if (const core::NodeObservation* seen = now.FindNode(node.name)) {
        node.etcd_member = seen->etcd_member;
        node.etcd_healthy = seen->etcd_healthy;
        node.etcd_leader = seen->etcd_leader;
      }
    }
    observed.etcd_observed = true;
    return absl::OkStatus();
  }
  // As the Talos observer: a control plane the pass holds is taken from it, the others are
  // asked and added.
  absl::Status ObserveEtcdReusing(const core::ClusterProfile& profile,
                                  core::ObservedCluster& observed, EtcdReadings& pass) override {
    if (observed.etcd_observed) return absl::OkStatus();
    const EtcdReadings held = pass;
    if (absl::Status s = ObserveEtcd(profile, observed); !s.ok()) return s;
    for (core::NodeObservation& node : observed.nodes) {
      if (!core::IsControlPlane(profile, node.name)) continue;
      if (auto read = held.nodes.find(node.name); read != held.nodes.end()) {
        reused_etcd.insert(node.name);
        node.etcd_healthy = read->second.healthy;
        node.etcd_member = read->second.member;
        node.etcd_leader = read->second.leader;
        continue;
      }
      pass.nodes[node.name] = {node.etcd_healthy, node.etcd_member, node.etcd_leader};
    }
    return absl::OkStatus();
  }
  absl::Status error;
  int full_looks = 0;          // Observe, with or without etcd
  int looks_without_etcd = 0;  // of them
  int etcd_looks = 0;          // ObserveEtcd
  std::vector<std::string> followed;  // every node a partial look asked for
  // Each node a partial look asked etcd of: how often it had been told to upgrade by then, and
  // how often it had rebooted.
  struct EtcdFollowed {
    std::string node;
    int told = 0;
    int booted = 0;
  };
  std::vector<EtcdFollowed> etcd_followed;
  std::set<std::string> reused_etcd;  // control planes a look took from its pass's readings

 private:
  RolloutWorld& world_;
};

class MemoryStatusStore final : public StatusStore {
 public:
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadAll(std::stop_token) override {
    return latest;
  }
  absl::Status Record(const core::ClusterStatus& status, std::stop_token) override {
    latest[status.cluster] = status;
    history.push_back(status);
    waited.push_back(true);
    return absl::OkStatus();
  }
  // News that nothing resumes from; with `lose_news`, lost as a crash before its push loses it.
  absl::Status RecordSoon(const core::ClusterStatus& status, std::stop_token) override {
    if (!lose_news) latest[status.cluster] = status;
    history.push_back(status);
    waited.push_back(false);
    return absl::OkStatus();
  }
  std::map<std::string, core::ClusterStatus> latest;
  std::vector<core::ClusterStatus> history;
  std::vector<bool> waited;  // per record in history: Record (true) or RecordSoon
  bool lose_news = false;
};

class WorldExecutor final : public RolloutExecutor {
 public:
  WorldExecutor(RolloutWorld& world, MemoryStatusStore& store) : world_(world), store_(store) {}
  absl::StatusOr<ActionResult> Execute(const core::ClusterProfile& profile,
                                       const core::RolloutDecision& d, std::stop_token) override {
    calls.push_back(std::string(core::ActionKindName(d.kind)) + " " + d.node);
    if (on_execute) on_execute(d);
    if (runs_inline &&
        (d.kind == core::ActionKind::kCallUpgrade || d.kind == core::ActionKind::kInstallImage)) {
      // The operation must already be on the status branch when the node is called, naming
      // the image it is called with.
      const auto& in_flight = store_.latest.at(profile.name).rollout.in_flight;
      recorded_before_call =
          recorded_before_call &&
          std::any_of(in_flight.begin(), in_flight.end(), [&](const core::OperationInFlight& op) {
            return op.node == d.node && op.image == d.image;
          });
      if (!pushes_before_first_call) {
        pushes_before_first_call = std::count(store_.waited.begin(), store_.waited.end(), true);
      }
    }
    if (d.kind == core::ActionKind::kInstallImage && busy_installs > 0) {
      --busy_installs;  // an install a killed process started is still running
      return talos::RecognizeTalosAnswer(absl::FailedPreconditionError(
          "talos LifecycleUpgrade on node 10.0.0.4: another installation/upgrade is already in "
          "progress"));
    }
    if (d.kind == core::ActionKind::kDrainNode && drain) return drain();
    if (d.kind == core::ActionKind::kCallUpgrade && !refusal.ok()) return refusal;
    world_.Apply(d);
    return ActionResult{"actor-" + d.node, ""};
  }
  std::vector<std::string> calls;
  bool recorded_before_call = true;
  // The records pushed (waited for) before the first call to a node.
  std::optional<std::ptrdiff_t> pushes_before_first_call;
  // False when called off the reconcile's thread (BackgroundSteps): the store is not read then.
  bool runs_inline = true;
  absl::Status refusal;
  int busy_installs = 0;
  std::function<absl::Status()> drain;  // the drain's result, when set
  std::function<void(const core::RolloutDecision&)> on_execute;  // sees each action first

 private:
  RolloutWorld& world_;
  MemoryStatusStore& store_;
};

struct Harness {
  explicit Harness(const std::string& from = "1.11.6", const std::string& to = "1.12.0")
      : world(MakeProfile(FiveNodes(from, "1.34.1"), to, "1.34.1"),
              MakeObserved(FiveNodes(from, "1.34.1"))) {
    Publish(world.profile(), {});
  }

  RolloutWorld world;
  WorldClock clock{world};
  WorldObserver observer{world};
  MemoryStatusStore store;
  WorldExecutor executor{world, store};
  DesiredState desired;
  Metrics metrics;
  gates::HealthGateRunner* gates = nullptr;
  StatusStore* peers = nullptr;
  const releases::ReleaseCache* releases = nullptr;
  InFlightFollower* follower = nullptr;

  void Publish(const core::ClusterProfile& profile, std::vector<core::InvalidProfile> invalid,
               const std::string& commit = "c0ffee") {
    auto snapshot = std::make_shared<DesiredSnapshot>();
    snapshot->commit = commit;
    snapshot->profiles.profiles = {profile};
    snapshot->profiles.support_matrix = core::SupportMatrix::BuiltIn();
    snapshot->profiles.release_catalog = core::ReleaseCatalog::BuiltIn();
    snapshot->profiles.invalid = std::move(invalid);
    desired.Publish(snapshot);
  }

  std::unique_ptr<RolloutReconciler> Make(bool dry_run = false) {
    return std::make_unique<RolloutReconciler>(
        RolloutReconciler::Deps{desired, observer, executor, store, clock, metrics, gates, peers,
                                releases, nullptr, {}, follower},
        RolloutReconcilerOptions{std::chrono::milliseconds(1000), dry_run, 32}, store.latest);
  }

  // Reconciles until the outcome is not a requeue, following the requeue times.
  ReconcileOutcome RunToRest(RolloutReconciler& r, int max_rounds = 5000) {
    ReconcileOutcome outcome;
    for (int i = 0; i < max_rounds; ++i) {
      outcome = r.Reconcile("prod", {});
      if (outcome.kind != ReconcileOutcome::Kind::kRequeueAfter) return outcome;
      world.AdvanceTo(world.now() + std::max(outcome.after, std::chrono::milliseconds(1)));
    }
    return outcome;
  }
};

// What the reconciler told its follower of nodes in flight.
class RecordingFollower final : public InFlightFollower {
 public:
  void Follow(const core::ClusterProfile& profile, const std::vector<std::string>& nodes) override {
    if (told.empty() || told.back() != nodes) told.push_back(nodes);
    clusters.insert(profile.name);
    followed = std::set<std::string>(nodes.begin(), nodes.end());
  }
  void Keep(const std::string&, const std::vector<std::string>& nodes) override {
    std::erase_if(followed, [&](const std::string& node) {
      return std::find(nodes.begin(), nodes.end(), node) == nodes.end();
    });
  }
  void Forget(const std::string& cluster) override { forgotten.push_back(cluster); }
  bool Hearing(const std::string&, const std::vector<std::string>& nodes) const override {
    return hears && !nodes.empty();
  }
  bool IsFollowing(const std::string&, const std::string& node) const override {
    return followed.contains(node);
  }

  bool hears = false;                          // what Hearing answers for nodes in flight
  std::vector<std::vector<std::string>> told;  // each change of the nodes in flight
  std::set<std::string> followed;              // what Follow and Keep leave followed
  std::set<std::string> clusters;
  std::vector<std::string> forgotten;
};

TEST(RolloutReconcilerTest, TellsItsFollowerTheNodesInFlightAndForgetsAClusterGone) {
  Harness h;
  RecordingFollower follower;
  h.follower = &follower;
  auto r = h.Make();
  EXPECT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  using Nodes = std::vector<std::string>;
  // A node is followed from its start; between two nodes the reconcile may end with none.
  std::vector<Nodes> in_flight;
  for (const Nodes& nodes : follower.told) {
    if (!nodes.empty()) in_flight.push_back(nodes);
  }
  EXPECT_EQ(in_flight, (std::vector<Nodes>{{"w-0"}, {"w-1"}, {"cp-0"}, {"cp-2"}, {"cp-1"}}));
  ASSERT_FALSE(follower.told.empty());
  EXPECT_EQ(follower.told.back(), Nodes{}) << "a node still followed once all are done";
  EXPECT_EQ(follower.clusters, std::set<std::string>{"prod"});

  core::ClusterProfile other = h.world.profile();
  other.name = "staging";
  h.Publish(other, {});
  EXPECT_EQ(r->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kForget);
  EXPECT_EQ(follower.forgotten, std::vector<std::string>{"prod"});
}

// A node completed is no longer followed from the action that completes it, not from the end
// of that reconcile: the next node's upgrade call, which can take the image's pull, finds no
// other node followed.
TEST(RolloutReconcilerTest, ANodeCompletedIsNotFollowedDuringTheNextUpgradeCall) {
  Harness h;
  h.world.profile().policy.settle = std::chrono::seconds(0);  // the next node in the same pass
  h.Publish(h.world.profile(), {});
  RecordingFollower follower;
  h.follower = &follower;
  std::vector<std::string> upgraded;
  h.executor.on_execute = [&](const core::RolloutDecision& d) {
    if (d.kind != core::ActionKind::kCallUpgrade) return;
    upgraded.push_back(d.node);
    for (const std::string& node : follower.followed) {
      EXPECT_EQ(node, d.node) << "still followed at the upgrade call of " << d.node;
    }
  };
  auto r = h.Make();
  EXPECT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(upgraded.size(), 5u);
}

// A node in flight whose events are heard is looked at five times less often: what ends its
// wait wakes the cluster.
TEST(RolloutReconcilerTest, ANodeInFlightThatIsHeardIsPolledLessOften) {
  for (const bool heard : {false, true}) {
    SCOPED_TRACE(heard ? "heard" : "not heard");
    Harness h;
    RecordingFollower follower;
    follower.hears = heard;
    h.follower = &follower;
    auto r = h.Make();
    const ReconcileOutcome outcome = r->Reconcile("prod", {});
    ASSERT_EQ(outcome.kind, ReconcileOutcome::Kind::kRequeueAfter);
    ASSERT_FALSE(follower.told.empty());
    ASSERT_EQ(follower.told.back(), std::vector<std::string>{"w-0"});
    EXPECT_EQ(outcome.after, std::chrono::milliseconds(heard ? 5000 : 1000));
  }
}

// The reconciler of `h`, with `follower`, after the reconcile that upgraded w-0 while every node
// was read from its live watch (`outcome`: that reconcile's).
std::unique_ptr<RolloutReconciler> UpgradeW0ReadFromItsWatch(Harness& h,
                                                             RecordingFollower& follower,
                                                             ReconcileOutcome& outcome) {
  for (core::NodeObservation& node : h.world.observed().nodes) node.watched = true;
  h.follower = &follower;
  std::unique_ptr<RolloutReconciler> r = h.Make();
  outcome = r->Reconcile("prod", {});
  EXPECT_EQ(h.world.log(), std::vector<std::string>{"upgrade w-0"});
  return r;
}

// A node in flight the look read from its live watch is not handed to the follower (its
// events would carry the whole install, which wakes nothing): the watch's end and its readiness
// wake the cluster, so it counts as heard. A node no longer read so (it went down) is handed
// over.
TEST(RolloutReconcilerTest, ANodeInFlightReadFromItsWatchIsHeardWithoutTheFollower) {
  Harness h;
  RecordingFollower follower;  // hears nothing
  ReconcileOutcome outcome;
  auto r = UpgradeW0ReadFromItsWatch(h, follower, outcome);
  ASSERT_EQ(outcome.kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_TRUE(follower.followed.empty()) << *follower.followed.begin();
  EXPECT_EQ(outcome.after, std::chrono::milliseconds(5000)) << "w-0 polled as not heard";

  for (core::NodeObservation& node : h.world.observed().nodes) node.watched = false;
  outcome = r->Reconcile("prod", {});
  ASSERT_EQ(outcome.kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_EQ(follower.followed, std::set<std::string>{"w-0"});
  EXPECT_EQ(outcome.after, std::chrono::milliseconds(1000)) << "the follower hears nothing";
}

// The look that finds a node in flight down, and hands it to the follower, polls it as heard:
// the follow it starts subscribes to the node again on its backoff (NodeEventWake), so a look
// one node poll later would only find it down again. A node followed already that the follower
// does not hear is polled at the node poll.
TEST(RolloutReconcilerTest, ANodeFoundDownAndHandedToTheFollowerIsPolledAsHeard) {
  Harness h;
  RecordingFollower follower;  // hears nothing
  ReconcileOutcome outcome;
  auto r = UpgradeW0ReadFromItsWatch(h, follower, outcome);
  ASSERT_TRUE(follower.followed.empty());

  for (core::NodeObservation& node : h.world.observed().nodes) node.watched = false;
  h.world.observed().FindNode("w-0")->reachable = false;  // its watch ended: it fell
  outcome = r->Reconcile("prod", {});
  ASSERT_EQ(outcome.kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_EQ(follower.followed, std::set<std::string>{"w-0"});
  EXPECT_EQ(outcome.after, std::chrono::milliseconds(5000)) << "found down, followed from now";

  outcome = r->Reconcile("prod", {});
  ASSERT_EQ(outcome.kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_EQ(outcome.after, std::chrono::milliseconds(1000)) << "followed, and not heard";
}

TEST(RolloutReconcilerTest, RollsOutRecordingEachOperationBeforeTheCall) {
  Harness h;
  h.world.profile().policy.settle = std::chrono::seconds(5);
  h.Publish(h.world.profile(), {});
  auto r = h.Make();
  ReconcileOutcome outcome = h.RunToRest(*r);
  EXPECT_EQ(outcome.kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
  EXPECT_TRUE(h.executor.recorded_before_call);
  EXPECT_EQ(h.world.log(), (std::vector<std::string>{"upgrade w-0", "upgrade w-1", "upgrade cp-0",
                                                     "upgrade cp-2", "upgrade cp-1"}));
  EXPECT_EQ(h.metrics.node_upgrades_started.Value(), 5u);
  EXPECT_EQ(h.metrics.node_upgrades.Value("completed"), 5u);
  EXPECT_EQ(h.metrics.node_upgrade_duration.Count("completed"), 5u);
  EXPECT_GT(h.metrics.node_upgrade_duration.Sum("completed"), 0);
  EXPECT_EQ(h.metrics.node_upgrades.Value("failed"), 0u);
  EXPECT_EQ(h.metrics.cluster_phase.PhaseOf("prod"), "Ready");
  EXPECT_GE(h.metrics.reconciles.Value("done"), 1u);
  EXPECT_EQ(h.store.latest.at("prod").desired_commit_applied, "c0ffee");
}

// A cluster with nothing to do is looked at without etcd; once its profile asks for an upgrade,
// etcd is asked before the decision reads it (the leader goes last, as before), and every
// look while a node is in flight has it.
TEST(RolloutReconcilerTest, EtcdIsAskedOnlyWhenTheDecisionMayReadIt) {
  Harness h("1.11.6", "1.11.6");
  auto r = h.Make();
  EXPECT_EQ(r->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
  EXPECT_EQ(h.observer.looks_without_etcd, 1);
  EXPECT_EQ(h.observer.etcd_looks, 0);

  h.world.profile().talos_version = *core::ParseTalosVersion("1.12.0");
  h.Publish(h.world.profile(), {});
  EXPECT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(h.world.log(), (std::vector<std::string>{"upgrade w-0", "upgrade w-1", "upgrade cp-0",
                                                     "upgrade cp-2", "upgrade cp-1"}));
  EXPECT_GE(h.observer.etcd_looks, 1);
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
  const int etcd_looks = h.observer.etcd_looks;
  EXPECT_EQ(r->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(h.observer.etcd_looks, etcd_looks);
}

// While a control plane in flight is going down (told to upgrade, not rebooted yet) no decision
// reads its etcd member: it is not asked; before the call (the leader hand-over) and after the
// new boot (the node verified) it is.
TEST(RolloutReconcilerTest, EtcdOfANodeInFlightIsNotAskedBetweenItsUpgradeCallAndItsReboot) {
  Harness h("1.11.6", "1.12.0");
  auto r = h.Make();
  EXPECT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
  std::set<std::string> after_boot;
  for (const auto& asked : h.observer.etcd_followed) {
    EXPECT_FALSE(asked.told > asked.booted)
        << asked.node << " asked while going down (told " << asked.told << ", booted "
        << asked.booted << ")";
    if (asked.told >= 1 && asked.booted == asked.told) after_boot.insert(asked.node);
  }
  EXPECT_EQ(after_boot, (std::set<std::string>{"cp-0", "cp-1", "cp-2"}))
      << "each control plane is verified after its new boot";
}

// The outcome says when the pass's last look began, which a change enqueued before it needs no
// reconcile of its own (WorkQueue::AddChange); a pass whose look failed saw nothing.
TEST(RolloutReconcilerTest, TheOutcomeSaysWhenTheLastLookBeganAndNoneWhenItFailed) {
  Harness h("1.11.6", "1.11.6");
  auto r = h.Make();
  const Env::Instant before = h.clock.Monotonic();
  const ReconcileOutcome looked = r->Reconcile("prod", {});
  ASSERT_TRUE(looked.looked_at.has_value());
  EXPECT_GE(*looked.looked_at, before);
  EXPECT_LE(*looked.looked_at, h.clock.Monotonic());
  h.observer.error = absl::UnavailableError("down");
  EXPECT_EQ(r->Reconcile("prod", {}).looked_at, std::nullopt);
}

// The look after a control plane completes takes that node's etcd from the look that saw it
// complete (the same pass; completing changes no etcd member). The last control plane (cp-1,
// the leader) ends the rollout: no look after it reads etcd.
TEST(RolloutReconcilerTest, TheLookAfterAControlPlaneCompletesReusesItsEtcdReading) {
  Harness h("1.11.6", "1.12.0");
  auto r = h.Make();
  EXPECT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
  EXPECT_EQ(h.observer.reused_etcd, (std::set<std::string>{"cp-0", "cp-2"}));
}

// A control plane back on its new boot is not asked etcd before it is running and ready: until
// then its member is not read (NodeVerified), and a booting node's etcd refuses. Here no
// control plane becomes ready on its new boot: the first one to upgrade fails at its deadline.
TEST(RolloutReconcilerTest, EtcdOfANodeBackOnANewBootIsNotAskedBeforeItIsReady) {
  Harness h("1.11.6", "1.12.0");
  for (const char* node : {"cp-0", "cp-1", "cp-2"}) h.world.never_ready[node] = true;
  auto r = h.Make();
  static_cast<void>(h.RunToRest(*r));
  ASSERT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kUpgradeFailed);
  for (const auto& asked : h.observer.etcd_followed) {
    EXPECT_FALSE(asked.told >= 1 && asked.booted == asked.told)
        << asked.node << " asked on its new boot before it was ready";
  }
  int rebooted = 0;
  for (const auto& [node, count] : h.world.reboots_into_upgrade()) rebooted += count;
  EXPECT_EQ(rebooted, 3) << "the two workers and one control plane rebooted into the upgrade";
}

// A status file read at start makes no phase series by itself: a planted one of a cluster
// without a profile never does, a real cluster's appears with its first reconcile.
TEST(RolloutReconcilerTest, APhaseSeriesComesFromAReconcileNotFromAStatusFile) {
  Harness h("1.12.0", "1.12.0");
  core::ClusterStatus ghost;
  ghost.cluster = "ghost";
  ghost.phase = core::ClusterPhase::kUpgradeFailed;
  h.store.latest["ghost"] = ghost;
  auto r = h.Make();
  EXPECT_EQ(h.metrics.cluster_phase.PhaseOf("ghost"), "");
  EXPECT_EQ(h.metrics.cluster_phase.PhaseOf("prod"), "");
  EXPECT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(h.metrics.cluster_phase.PhaseOf("prod"), "Ready");
  EXPECT_EQ(h.metrics.cluster_phase.PhaseOf("ghost"), "");
}

// Releases listed from the installer's registry join the catalog: status reports the newest
// as available, and the built-in catalog's newest without them.
TEST(RolloutReconcilerTest, RegistryReleasesAreAvailable) {
  Harness h("1.12.0", "1.12.0");
  auto r = h.Make();
  EXPECT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(h.store.latest.at("prod").talos.available, "1.13.9");
  test_support::SimulatedEnv env;
  releases::ReleaseCache releases(
      std::make_unique<registry::TagListSource>(
          [](std::stop_token) -> absl::StatusOr<std::vector<std::string>> {
            return std::vector<std::string>{"v1.12.0", "v1.14.2", "v1.15.0-beta.1", "latest"};
          }),
      std::chrono::hours(1), env);
  ASSERT_TRUE(releases.Refresh({}).ok());
  h.releases = &releases;
  r = h.Make();
  EXPECT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(h.store.latest.at("prod").talos.available, "1.14.2");
}

TEST(RolloutReconcilerTest, ANodeInFlightIsFollowedAloneAndBetweenNodesOneCommit) {
  Harness h;
  h.world.profile().policy.settle = std::chrono::seconds(0);
  h.Publish(h.world.profile(), {});
  auto r = h.Make();
  EXPECT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
  for (const auto& [node, count] : h.world.reboots_into_upgrade()) EXPECT_EQ(count, 1) << node;
  // While a node rebooted, only that node was looked at; the whole cluster a few times per node.
  EXPECT_GT(h.observer.followed.size(), 10u);
  EXPECT_LE(h.observer.full_looks, 15);
  // A completion goes out with the next node's start, in one record; before the first control
  // plane the etcd snapshot taken in between goes out with them too.
  int completions_alone = 0;
  for (const core::ClusterStatus& s : h.store.history) {
    completions_alone += s.phase == core::ClusterPhase::kUpgradingTalos &&
                         s.rollout.in_flight.empty() && !s.history.empty() &&
                         s.history.back().event.find("healthy on") != std::string::npos;
    // Each event is in the history once, though its record waited for the next.
    std::map<std::string, int> seen;
    for (const core::HistoryEntry& e : s.history) {
      EXPECT_EQ(++seen[e.event], 1) << "twice in the history: " << e.event;
    }
  }
  EXPECT_EQ(completions_alone, 0);
}

// Before the first node's call exactly one record is pushed, the node's write-ahead record, and
// it names what the call needs: no pre-pull below 1.13 (nothing is pulled, and nothing says
// so), and from 1.13 the pre-pull goes out in the same push.
TEST(RolloutReconcilerTest, TheFirstCallFollowsOnePushThatNamesIt) {
  struct Case {
    std::string from, to, first_action;
    bool pulls;
  };
  for (const Case& c : {Case{"1.11.6", "1.12.0", "call-upgrade w-0", false},
                        Case{"1.13.9", "1.14.2", "pre-pull-image ", true}}) {
    SCOPED_TRACE(c.from);
    Harness h(c.from, c.to);
    auto r = h.Make();
    ASSERT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
    EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
    EXPECT_TRUE(h.executor.recorded_before_call);
    ASSERT_FALSE(h.executor.calls.empty());
    EXPECT_EQ(h.executor.calls.front(), c.first_action);
    EXPECT_EQ(h.executor.pushes_before_first_call, 1);
    ASSERT_TRUE(h.store.waited.front());
    const core::RolloutMemory& first = h.store.history.front().rollout;
    ASSERT_EQ(first.in_flight.size(), 1u);
    EXPECT_EQ(first.in_flight.front().node, "w-0");
    EXPECT_EQ(first.in_flight.front().phase, core::OperationPhase::kRecorded);
    EXPECT_EQ(first.prepulled_image, c.pulls ? first.in_flight.front().image : "");
    if (c.pulls) continue;
    for (const core::ClusterStatus& s : h.store.history) {
      EXPECT_THAT(s.message, Not(HasSubstr("pre-pull")));
      for (const core::HistoryEntry& e : s.history) {
        EXPECT_THAT(e.event, Not(HasSubstr("pre-pull")));
      }
    }
  }
}

// A node rebooting, back, becoming healthy: news that does not wait for its push. Everything a
// restart resumes from (an operation recorded, called, completed; the end) waits.
TEST(RolloutReconcilerTest, NewsIsRecordedWithoutWaitingAndOperationsWait) {
  Harness h;
  auto r = h.Make();
  ASSERT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
  EXPECT_TRUE(h.executor.recorded_before_call);
  ASSERT_EQ(h.store.history.size(), h.store.waited.size());
  int news = 0;
  for (size_t i = 1; i < h.store.history.size(); ++i) {
    const core::ClusterStatus& before = h.store.history[i - 1];
    const core::ClusterStatus& now = h.store.history[i];
    if (!h.store.waited[i]) {
      ++news;
      EXPECT_TRUE(core::OnlyReportDiffers(before, now)) << now.message;
    }
    if (!(before.rollout == now.rollout) || before.phase != now.phase) {
      EXPECT_TRUE(h.store.waited[i]) << now.message;
    }
  }
  EXPECT_GE(news, 5);  // at least one per node
  EXPECT_TRUE(h.store.waited.back());
}

// A commit that asks nothing of a Ready cluster moves its status without a push of its own (it
// goes out with the next one); lost with a crash, the restarted reconciler records it again.
TEST(RolloutReconcilerTest, AReadyClusterMovedToACommitThatAsksNothingOfItIsNotWaitedFor) {
  Harness h("1.12.0", "1.12.0");
  auto r = h.Make();
  ASSERT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  ASSERT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
  const size_t records = h.store.history.size();
  h.store.lose_news = true;
  h.Publish(h.world.profile(), {}, "d00d");
  ASSERT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  ASSERT_EQ(h.store.history.size(), records + 1);
  EXPECT_FALSE(h.store.waited.back());
  EXPECT_EQ(h.store.history.back().desired_commit_applied, "d00d");
  EXPECT_EQ(h.store.latest.at("prod").desired_commit_applied, "c0ffee") << "lost";
  EXPECT_TRUE(h.executor.calls.empty());

  h.store.lose_news = false;
  auto restarted = h.Make();
  ASSERT_EQ(h.RunToRest(*restarted).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(h.store.latest.at("prod").desired_commit_applied, "d00d");
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
  EXPECT_TRUE(h.executor.calls.empty());
}

// Losing every news-only record (a crash before their pushes) loses nothing a restart needs:
// each node is upgraded exactly once.
TEST(RolloutReconcilerTest, ARestartAfterNewsWasLostUpgradesEachNodeOnce) {
  Harness h;
  h.store.lose_news = true;
  auto first = h.Make();
  // Until the third node was called and the last record since was news (lost).
  for (int i = 0; i < 5000 && (h.world.log().size() < 3 || h.store.waited.back()); ++i) {
    ReconcileOutcome o = first->Reconcile("prod", {});
    h.world.AdvanceTo(h.world.now() + std::max(o.after, std::chrono::milliseconds(1)));
  }
  ASSERT_EQ(h.world.log().size(), 3u);
  ASSERT_FALSE(h.store.waited.back());
  EXPECT_NE(core::StatusContentYaml(h.store.latest.at("prod")),
            core::StatusContentYaml(h.store.history.back()));
  first.reset();
  auto second = h.Make();  // from the store's latest: the last status that waited
  EXPECT_NE(h.RunToRest(*second).kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
  EXPECT_EQ(h.world.log().size(), 5u);
  for (const auto& [node, count] : h.world.reboots_into_upgrade()) EXPECT_EQ(count, 1) << node;
}

TEST(RolloutReconcilerTest, ARestartResumesFromTheRecordedStatus) {
  Harness h;
  auto first = h.Make();
  // Run until the first node's upgrade was called, then "crash".
  for (int i = 0; i < 50 && h.world.log().empty(); ++i) {
    ReconcileOutcome o = first->Reconcile("prod", {});
    h.world.AdvanceTo(h.world.now() + o.after);
  }
  ASSERT_EQ(h.world.log().size(), 1u);
  first.reset();
  auto second = h.Make();  // reads the store's latest status, as after a restart
  EXPECT_NE(h.RunToRest(*second).kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
  for (const auto& [node, count] : h.world.reboots_into_upgrade()) EXPECT_EQ(count, 1) << node;
}

TEST(RolloutReconcilerTest, ANodeRefusalHaltsWithItsWords) {
  Harness h;
  h.executor.refusal = absl::UnknownError("error validating installer image \"x\": not found");
  auto r = h.Make();
  EXPECT_NE(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kRequeueAfter);
  const core::ClusterStatus& s = h.store.latest.at("prod");
  EXPECT_EQ(s.phase, core::ClusterPhase::kUpgradeFailed);
  EXPECT_THAT(s.message, HasSubstr("error validating installer image"));
  ASSERT_TRUE(s.rollout.failure.has_value());
  EXPECT_TRUE(s.rollout.in_flight.empty());
  const size_t calls = h.executor.calls.size();
  EXPECT_NE(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_EQ(h.executor.calls.size(), calls) << "a halted cluster touched a node";
}

TEST(RolloutReconcilerTest, AnInstallStillRunningFromBeforeARestartIsWaitedFor) {
  Harness h("1.13.9", "1.14.2");
  h.executor.busy_installs = 3;
  auto r = h.Make();
  // The first answers "already in progress": the reconcile waits, saying so, and halts nothing.
  ReconcileOutcome outcome;
  for (int i = 0; i < 50 && h.executor.busy_installs == 3; ++i) {
    outcome = r->Reconcile("prod", {});
    h.world.AdvanceTo(h.world.now() + outcome.after);
  }
  EXPECT_EQ(outcome.kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kUpgradingTalos);
  EXPECT_THAT(h.store.latest.at("prod").message, HasSubstr("already in progress"));
  EXPECT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  const core::ClusterStatus& s = h.store.latest.at("prod");
  EXPECT_EQ(s.phase, core::ClusterPhase::kReady) << s.message;
  EXPECT_FALSE(s.rollout.failure.has_value());
  EXPECT_EQ(h.executor.busy_installs, 0);
  for (const auto& [node, count] : h.world.reboots_into_upgrade()) EXPECT_EQ(count, 1) << node;
  EXPECT_EQ(h.world.reboots_into_upgrade().size(), 5u);
}

TEST(RolloutReconcilerTest, StatusKeepsTheLastSeenVersionsWhileNodesDoNotAnswer) {
  Harness h;
  auto r = h.Make();
  // Run until the first control plane is in flight (both workers done).
  for (int i = 0; i < 500 && h.world.log().size() < 3; ++i) {
    ReconcileOutcome o = r->Reconcile("prod", {});
    h.world.AdvanceTo(h.world.now() + std::max(o.after, std::chrono::milliseconds(1)));
  }
  ASSERT_EQ(h.world.log().back(), "upgrade cp-0");
  static_cast<void>(r->Reconcile("prod", {}));  // what it records is checked below
  ASSERT_EQ(h.store.latest.at("prod").talos.progress, "2/5");
  // The endpoint goes down with it: no node answers for a while.
  core::ObservedCluster saved = h.world.observed();
  for (core::NodeObservation& n : h.world.observed().nodes) {
    n.reachable = false;
    n.talos.reset();
    n.kubelet.reset();
    n.ready = false;
  }
  static_cast<void>(r->Reconcile("prod", {}));  // what it records is checked below
  const core::ClusterStatus& s = h.store.latest.at("prod");
  EXPECT_EQ(s.phase, core::ClusterPhase::kUpgradingTalos);
  EXPECT_EQ(s.talos.progress, "2/5");
  EXPECT_EQ(s.talos.current, "1.11.6");
  EXPECT_EQ(s.message, "cp-0 rebooting into 1.12.0 (2/5)");
  for (const core::NodeStatus& n : s.nodes) {
    EXPECT_EQ(n.talos, n.name.starts_with("w-") ? "1.12.0" : "1.11.6") << n.name;
    EXPECT_EQ(n.kubelet, "1.34.1") << n.name;
  }
  h.world.observed() = saved;
  EXPECT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
}

// Reconciles `r` until `done`, following the requeue times (at most `max_rounds`).
void RunUntil(Harness& h, RolloutReconciler& r, const std::function<bool()>& done,
              int max_rounds = 500) {
  for (int i = 0; i < max_rounds && !done(); ++i) {
    ReconcileOutcome o = r.Reconcile("prod", {});
    h.world.AdvanceTo(h.world.now() + std::max(o.after, std::chrono::milliseconds(1)));
  }
}

// The numerator of a progress "k/n".
int Done(const std::string& progress) { return std::stoi(progress.substr(0, progress.find('/'))); }

// A replica that takes a cluster back (a new term, after a freeze) while another replica moved
// its rollout on reports the nodes as they are now, not as its own look before the freeze saw
// them: no record after the adoption sets a node's version or the progress back.
TEST(RolloutReconcilerTest, AnAdoptedClusterIsReportedAsItIsNow) {
  Harness h;
  auto frozen = h.Make();
  RunUntil(h, *frozen, [&] { return !h.world.log().empty(); });  // w-0 called, then a freeze
  ASSERT_EQ(h.world.log(), std::vector<std::string>{"upgrade w-0"});
  auto other = h.Make();  // took the shard meanwhile: completes w-0, calls w-1
  RunUntil(h, *other, [&] { return h.world.log().size() == 2; });
  static_cast<void>(other->Reconcile("prod", {}));  // records w-1 rebooting
  const core::ClusterStatus handed = h.store.latest.at("prod");
  ASSERT_EQ(handed.talos.progress, "1/5");
  ASSERT_EQ(handed.rollout.in_flight.size(), 1u);
  ASSERT_EQ(handed.rollout.in_flight.front().node, "w-1");
  frozen->Adopt("prod", handed);
  const size_t adopted_at = h.store.history.size();
  EXPECT_EQ(h.RunToRest(*frozen).kind, ReconcileOutcome::Kind::kDone);
  ASSERT_GT(h.store.history.size(), adopted_at);
  for (size_t i = adopted_at; i < h.store.history.size(); ++i) {
    const core::ClusterStatus& s = h.store.history[i];
    EXPECT_GE(Done(s.talos.progress), 1) << i << ": " << s.message;
    for (const core::NodeStatus& n : s.nodes) {
      if (n.name == "w-0") {
        EXPECT_EQ(n.talos, "1.12.0") << i << ": " << s.message;
      }
    }
  }
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
  for (const auto& [node, count] : h.world.reboots_into_upgrade()) EXPECT_EQ(count, 1) << node;
}

// What the shard elector asks before a give-back: is a node of the cluster mid-operation, as
// recorded (between two node calls, too).
TEST(RolloutReconcilerTest, AnOperationIsInFlightFromItsRecordToTheNodesCompletion) {
  Harness h;
  auto r = h.Make();
  EXPECT_FALSE(r->OperationInFlight("prod"));
  RunUntil(h, *r, [&] { return !h.world.log().empty(); });  // w-0 called, rebooting
  EXPECT_TRUE(r->OperationInFlight("prod"));
  EXPECT_FALSE(r->OperationInFlight("staging"));  // never recorded
  r->Adopt("prod", std::nullopt);                  // taken back with nothing on the branch
  EXPECT_FALSE(r->OperationInFlight("prod"));
  r->Adopt("prod", h.store.latest.at("prod"));
  EXPECT_TRUE(r->OperationInFlight("prod"));
  EXPECT_EQ(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kDone);
  EXPECT_FALSE(r->OperationInFlight("prod"));
}

// A Kubernetes API where one pod is guarded by a budget that never allows its eviction.
class GuardedPodKube final : public kube::KubeClient {
 public:
  absl::StatusOr<std::vector<kube::KubeNode>> ListNodes() override {
    return std::vector<kube::KubeNode>{};
  }
  absl::Status SetUnschedulable(const std::string&, bool) override { return absl::OkStatus(); }
  absl::Status SetPendingInstall(const std::string&, const std::optional<std::string>&) override {
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<kube::KubePod>> ListPodsOnNode(const std::string& node) override {
    return std::vector<kube::KubePod>{
        {"default", "guarded", node, "ReplicaSet", false, false}};
  }
  absl::Status EvictPod(const std::string&, const std::string&) override {
    return absl::ResourceExhaustedError(
        "Cannot evict pod as it would violate the pod's disruption budget.");
  }
};

using tr::test_support::SimulatedEnv;

TEST(RolloutReconcilerTest, ADrainThatTimesOutHaltsWithItsCause) {
  Harness h("1.13.9", "1.14.2");
  GuardedPodKube kube;
  SimulatedEnv drain_clock;
  h.executor.drain = [&] {
    return kube::DrainNode(kube, "w-0", {std::chrono::seconds(30), std::chrono::seconds(5)},
                           drain_clock, {})
        .status();
  };
  auto r = h.Make();
  EXPECT_NE(h.RunToRest(*r).kind, ReconcileOutcome::Kind::kRequeueAfter);
  const core::ClusterStatus& s = h.store.latest.at("prod");
  EXPECT_EQ(s.phase, core::ClusterPhase::kUpgradeFailed);
  EXPECT_THAT(s.message, HasSubstr("drain of w-0 timed out after 30s"));
  EXPECT_THAT(s.message, HasSubstr("default/guarded"));
  EXPECT_THAT(s.message, Not(HasSubstr("did not become healthy")));
  EXPECT_TRUE(h.world.reboots_into_upgrade().empty()) << "a node was rebooted undrained";
}

// The daemon's arrangement: the world's executor behind BackgroundSteps. Installs wait until the
// test lets them finish; the world is touched under one lock, which the observer takes too.
class HeldInstalls final : public RolloutExecutor {
 public:
  HeldInstalls(WorldExecutor& inner, std::mutex& world_mu) : inner_(inner), world_mu_(world_mu) {}
  absl::StatusOr<ActionResult> Execute(const core::ClusterProfile& profile,
                                       const core::RolloutDecision& d,
                                       std::stop_token stop) override {
    if (d.kind == core::ActionKind::kInstallImage) {
      std::unique_lock lock(mu_);
      installs_.push_back(d.node);
      // At most a minute, so that a broken test ends.
      released_.wait_for(lock, stop, std::chrono::minutes(1), [&] { return open_; });
      if (stop.stop_requested()) {
        ++stopped_;
        return absl::CancelledError("install stopped");
      }
      if (fail_next_) return *std::exchange(fail_next_, std::nullopt);
    }
    std::lock_guard world(world_mu_);
    return inner_.Execute(profile, d, stop);
  }
  void Release() {
    std::lock_guard lock(mu_);
    open_ = true;
    released_.notify_all();
  }
  // The next install, once released, fails with `error` instead.
  void FailNext(absl::Status error) {
    std::lock_guard lock(mu_);
    fail_next_ = std::move(error);
  }
  std::vector<std::string> installs() {
    std::lock_guard lock(mu_);
    return installs_;
  }
  int stopped() {
    std::lock_guard lock(mu_);
    return stopped_;
  }

 private:
  WorldExecutor& inner_;
  std::mutex& world_mu_;
  std::mutex mu_;
  std::condition_variable_any released_;
  bool open_ = false;
  std::optional<absl::Status> fail_next_;
  std::vector<std::string> installs_;
  int stopped_ = 0;
};

class LockedObserver final : public FleetObserver {
 public:
  LockedObserver(RolloutWorld& world, std::mutex& world_mu) : world_(world), world_mu_(world_mu) {}
  absl::StatusOr<core::ObservedCluster> Observe(const core::ClusterProfile&) override {
    std::lock_guard lock(world_mu_);
    return world_.observed();
  }

 private:
  RolloutWorld& world_;
  std::mutex& world_mu_;
};

// A lifecycle rollout (two workers at once) through BackgroundSteps, as in the daemon, with the
// installs held until Release().
struct BackgroundHarness {
  BackgroundHarness() {
    h.executor.runs_inline = false;
    h.world.profile().policy.max_parallel_workers = 2;
    h.Publish(h.world.profile(), {});
  }
  Harness h{"1.13.9", "1.14.2"};
  std::mutex world_mu;
  HeldInstalls held{h.executor, world_mu};
  BackgroundSteps steps{held};
  LockedObserver observer{h.world, world_mu};
  RolloutReconciler r{{h.desired, observer, steps, h.store, h.clock, h.metrics},
                      {std::chrono::milliseconds(1000), false, 32},
                      h.store.latest};
  // A bound against a hang, on the real clock (the world's clock is simulated).
  const Env::TimePoint deadline = Env::Default().Now() + std::chrono::minutes(1);
  bool installs_held = true;

  ReconcileOutcome ReconcileAndAdvance() {
    ReconcileOutcome o = r.Reconcile("prod", {});
    std::lock_guard lock(world_mu);
    h.world.AdvanceTo(h.world.now() + std::max(o.after, std::chrono::milliseconds(1)));
    return o;
  }
  // A step that is not held finishes before the clock moves on.
  void Settle() {
    while (Env::Default().Now() < deadline) {
      std::optional<OutstandingStep> o = steps.Outstanding("prod");
      if (!o || o->done || (installs_held && o->kind == core::ActionKind::kInstallImage)) return;
      std::this_thread::yield();
    }
  }
  // Until w-0's install is started (and held).
  void RunToFirstInstall() {
    while (held.installs().empty() && Env::Default().Now() < deadline) {
      static_cast<void>(ReconcileAndAdvance());
      Settle();
    }
  }
  void SetStage(const std::string& node, core::MachineStage stage) {
    std::lock_guard lock(world_mu);
    for (core::NodeObservation& n : h.world.observed().nodes) {
      if (n.name == node) n.stage = stage;
    }
  }
  // w-0's install, started and held, finishes while w-0 reports itself upgrading: its result
  // waits to be collected.
  void FinishFirstInstallWhileItsNodeLooksBusy() {
    RunToFirstInstall();
    ASSERT_EQ(held.installs(), std::vector<std::string>{"w-0"});
    SetStage("w-0", core::MachineStage::kUpgrading);
    held.Release();
    installs_held = false;
    Settle();
    ASSERT_TRUE(steps.Outstanding("prod").has_value());
    ASSERT_TRUE(steps.Outstanding("prod")->done);
  }
  // w-0's install is started and held, then w-0 loses power. The boot it had.
  std::string PowerCycleW0DuringItsInstall() {
    RunToFirstInstall();
    EXPECT_EQ(held.installs(), std::vector<std::string>{"w-0"});
    std::lock_guard lock(world_mu);
    const std::string before = h.world.observed().FindNode("w-0")->boot_id;
    h.world.PowerCycle("w-0");
    return before;
  }
  // Released and run to rest: Ready, w-0 installed `w0_installs` times and rebooted once, and
  // its install recorded on a boot (not `before`, not none).
  void ReleaseAndExpectReadyOnANewBootOfW0(int w0_installs, const std::string& before) {
    EXPECT_EQ(ReleaseAndRunToRest().kind, ReconcileOutcome::Kind::kDone);
    const core::ClusterStatus& done = h.store.latest.at("prod");
    EXPECT_EQ(done.phase, core::ClusterPhase::kReady) << done.message;
    const std::vector<std::string> installs = held.installs();
    EXPECT_EQ(std::count(installs.begin(), installs.end(), "w-0"), w0_installs);
    EXPECT_EQ(std::count(h.world.log().begin(), h.world.log().end(), "reboot w-0"), 1);
    bool recorded = false;
    for (const core::ClusterStatus& s : h.store.history) {
      for (const core::OperationInFlight& op : s.rollout.in_flight) {
        if (op.node != "w-0" || op.phase != core::OperationPhase::kInstalled) continue;
        EXPECT_NE(op.boot_id_before, before);
        EXPECT_FALSE(op.boot_id_before.empty());
        recorded = true;
      }
    }
    EXPECT_TRUE(recorded);
  }
  ReconcileOutcome ReleaseAndRunToRest() {
    held.Release();
    installs_held = false;
    ReconcileOutcome outcome;
    for (int i = 0; i < 5000 && Env::Default().Now() < deadline; ++i) {
      outcome = r.Reconcile("prod", {});
      if (outcome.kind != ReconcileOutcome::Kind::kRequeueAfter) break;
      Settle();
      std::lock_guard lock(world_mu);
      h.world.AdvanceTo(h.world.now() + std::max(outcome.after, std::chrono::milliseconds(1)));
    }
    return outcome;
  }
};

// w-0's install runs in the background and w-0 reports itself upgrading; with two workers
// allowed at once, the state machine would start w-1. Nothing else of the cluster
// starts until the install is done, and the install is not stopped for another.
TEST(RolloutReconcilerTest, NoOtherActionStartsWhileABackgroundStepRuns) {
  BackgroundHarness b;
  b.RunToFirstInstall();
  ASSERT_EQ(b.held.installs(), std::vector<std::string>{"w-0"});
  b.SetStage("w-0", core::MachineStage::kUpgrading);
  for (int i = 0; i < 20; ++i) static_cast<void>(b.ReconcileAndAdvance());
  EXPECT_EQ(b.held.installs(), std::vector<std::string>{"w-0"}) << "another install started";
  EXPECT_EQ(b.held.stopped(), 0) << "the running install was stopped for another action";
  const core::ClusterStatus& waiting = b.h.store.latest.at("prod");
  EXPECT_THAT(waiting.message, HasSubstr("waiting for install-image on w-0 to finish before "
                                         "start-node on w-1"));
  EXPECT_EQ(waiting.rollout.in_flight.size(), 1u);

  b.SetStage("w-0", core::MachineStage::kRunning);
  EXPECT_EQ(b.ReleaseAndRunToRest().kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(b.h.store.latest.at("prod").phase, core::ClusterPhase::kReady)
      << b.h.store.latest.at("prod").message;
  std::map<std::string, int> installs;
  for (const std::string& node : b.held.installs()) ++installs[node];
  EXPECT_EQ(installs.size(), 5u);
  for (const auto& [node, count] : installs) EXPECT_EQ(count, 1) << node;
}

// w-0 loses power the moment its install starts, and the install fails without reaching it
// (apid cannot dial it). w-0 comes back on a new boot still on its old Talos: it was never
// asked, so it is asked on that boot rather than waited on until its deadline (the operation
// was recorded on the boot before); it is installed and rebooted once.
TEST(RolloutReconcilerTest, ANodeItsInstallNeverReachedIsAskedAgainOnItsNewBoot) {
  BackgroundHarness b;
  const std::string boot_before = b.PowerCycleW0DuringItsInstall();
  b.held.FailNext(talos::RecognizeTalosAnswer(absl::UnavailableError(
      "connection error: desc = \"transport: Error while dialing: dial tcp 10.0.0.4:50000: "
      "connect: connection refused\"")));
  // The install that went through was recorded on the boot it was made on.
  b.ReleaseAndExpectReadyOnANewBootOfW0(/*w0_installs=*/2, boot_before);
}

// w-0 loses power while its install's call is on its way, comes back on a new boot still on its
// old Talos, and the install then goes through on that boot (a look read w-0 from its watch just
// before the power cut, so the operation was recorded on the boot before). The install is
// collected and w-0 drained and rebooted on the boot it is on, rather than waited on until its
// deadline: one install, one reboot.
TEST(RolloutReconcilerTest, AnInstallThatWentThroughOnANewBootIsCollectedAndTheNodeRebootedOnce) {
  BackgroundHarness b;
  const std::string boot_before = b.PowerCycleW0DuringItsInstall();
  // Looks see w-0 booting, then back on its old Talos, while the install still runs.
  for (int i = 0; i < 10; ++i) static_cast<void>(b.ReconcileAndAdvance());
  {
    std::lock_guard lock(b.world_mu);
    b.h.world.AdvanceTo(b.h.world.now() + b.h.world.reboot_time);
    const core::NodeObservation& back = *b.h.world.observed().FindNode("w-0");
    ASSERT_NE(back.boot_id, boot_before);
    ASSERT_EQ(back.stage, core::MachineStage::kRunning);
  }
  static_cast<void>(b.ReconcileAndAdvance());
  b.ReleaseAndExpectReadyOnANewBootOfW0(/*w0_installs=*/1, boot_before);
}

// w-0's install succeeds while w-0 still reports itself upgrading: the result waits for the
// decision that collects it, and w-0 is installed once. With one worker at a time the rollout
// only waits on w-0 meanwhile; with two it would start w-1, whose install must not drop w-0's
// result on its way.
class InstallCollectedTest : public ::testing::TestWithParam<int> {};

TEST_P(InstallCollectedTest, AnInstallThatSucceededWhileItsNodeLookedBusyIsCollectedNotRepeated) {
  BackgroundHarness b;
  b.h.world.profile().policy.max_parallel_workers = GetParam();
  b.h.Publish(b.h.world.profile(), {});
  ASSERT_NO_FATAL_FAILURE(b.FinishFirstInstallWhileItsNodeLooksBusy());
  for (int i = 0; i < 5; ++i) static_cast<void>(b.ReconcileAndAdvance());
  b.SetStage("w-0", core::MachineStage::kRunning);
  EXPECT_EQ(b.ReleaseAndRunToRest().kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(b.h.store.latest.at("prod").phase, core::ClusterPhase::kReady)
      << b.h.store.latest.at("prod").message;
  const std::vector<std::string> installs = b.held.installs();
  EXPECT_EQ(std::count(installs.begin(), installs.end(), "w-0"), 1);
  EXPECT_EQ(std::count(installs.begin(), installs.end(), "w-1"), 1);
}

INSTANTIATE_TEST_SUITE_P(Workers, InstallCollectedTest, ::testing::Values(1, 2));

// w-0's install succeeds, but w-0 reports itself upgrading until its deadline: w-1 waits for
// the result to be collected, w-0 fails at its deadline, and the result that nothing will
// collect now is dropped rather than left to hold the cluster or answer a later install.
TEST(RolloutReconcilerTest, ASucceededStepItsNodeWentOnWithoutIsDropped) {
  BackgroundHarness b;
  b.RunToFirstInstall();
  ASSERT_EQ(b.held.installs(), std::vector<std::string>{"w-0"});
  b.SetStage("w-0", core::MachineStage::kUpgrading);
  static_cast<void>(b.ReleaseAndRunToRest());
  const core::ClusterStatus& status = b.h.store.latest.at("prod");
  EXPECT_EQ(status.phase, core::ClusterPhase::kUpgradeFailed) << status.message;
  EXPECT_THAT(status.message, HasSubstr("w-0"));
  EXPECT_FALSE(b.steps.Outstanding("prod").has_value()) << "the install's result was kept";
  EXPECT_EQ(b.held.installs(), std::vector<std::string>{"w-0"}) << "w-1 was not held";
}

// w-0's install succeeds while w-0 reports itself upgrading, and w-0 is then taken out of the
// profile: no decision of w-0 will come to collect the result, so it holds nobody and the
// rollout goes on with w-1 (held for ever under a rule without that exception).
TEST(RolloutReconcilerTest, ASucceededStepOfANodeTakenOutOfTheProfileHoldsNobody) {
  BackgroundHarness b;
  ASSERT_NO_FATAL_FAILURE(b.FinishFirstInstallWhileItsNodeLooksBusy());
  core::ClusterProfile without_w0 = b.h.world.profile();
  std::erase_if(without_w0.nodes, [](const core::NodeSpec& n) { return n.name == "w-0"; });
  b.h.Publish(without_w0, {}, "d00d");
  for (int i = 0; i < 20; ++i) {
    static_cast<void>(b.ReconcileAndAdvance());
    b.Settle();
  }
  const std::vector<std::string> installs = b.held.installs();
  EXPECT_EQ(std::count(installs.begin(), installs.end(), "w-1"), 1)
      << b.h.store.latest.at("prod").message;
  EXPECT_EQ(std::count(installs.begin(), installs.end(), "w-0"), 1);
}

// In the daemon's arrangement the pre-pull runs in the background: its first look is posted as
// news (the rollout starts, saying what it pulls; a restart pulls again, so nothing resumes
// from it), and its result goes out with the first node's start, the one push before the
// first install, naming both.
TEST(RolloutReconcilerTest, ABackgroundPrePullIsPushedWithTheFirstNodesStart) {
  BackgroundHarness b;
  b.RunToFirstInstall();
  ASSERT_EQ(b.held.installs(), std::vector<std::string>{"w-0"});
  std::vector<core::ClusterStatus> pushed;
  std::vector<core::ClusterStatus> posted;
  ASSERT_EQ(b.h.store.history.size(), b.h.store.waited.size());
  for (size_t i = 0; i < b.h.store.history.size(); ++i) {
    (b.h.store.waited[i] ? pushed : posted).push_back(b.h.store.history[i]);
  }
  ASSERT_GE(posted.size(), 1u);  // the pre-pull's start, then news of the install
  EXPECT_THAT(posted[0].message, HasSubstr("pre-pulling"));
  EXPECT_FALSE(b.h.store.waited.front());
  EXPECT_TRUE(posted[0].rollout.in_flight.empty());
  EXPECT_EQ(posted[0].rollout.prepulled_image, "");
  ASSERT_EQ(pushed.size(), 1u);
  const core::RolloutMemory& start = pushed[0].rollout;
  ASSERT_EQ(start.in_flight.size(), 1u);
  EXPECT_EQ(start.in_flight.front().node, "w-0");
  EXPECT_EQ(start.in_flight.front().phase, core::OperationPhase::kRecorded);
  EXPECT_EQ(start.prepulled_image, start.in_flight.front().image);
  EXPECT_EQ(b.ReleaseAndRunToRest().kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(b.h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
}

// Over a whole rollout in the background (pre-pull, installs, the etcd snapshot after the
// workers), with no settle time: every record that starts or moves on an operation in flight
// waits for its push (write-ahead). What is posted at most drops a node from the operations in
// flight: the rest at the start of the etcd snapshot carries the last worker's completion,
// whose record may wait for the next (a crash only repeats the completion and the snapshot).
TEST(RolloutReconcilerTest, InTheBackgroundEveryOperationsRecordWaits) {
  BackgroundHarness b;
  b.h.world.profile().policy.settle = std::chrono::seconds(0);
  b.h.Publish(b.h.world.profile(), {});
  b.RunToFirstInstall();
  EXPECT_EQ(b.ReleaseAndRunToRest().kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(b.h.store.latest.at("prod").phase, core::ClusterPhase::kReady);
  ASSERT_EQ(b.h.store.history.size(), b.h.store.waited.size());
  const auto gains = [](const core::RolloutMemory& before, const core::RolloutMemory& after) {
    return std::any_of(after.in_flight.begin(), after.in_flight.end(),
                       [&](const core::OperationInFlight& op) {
                         return std::find(before.in_flight.begin(), before.in_flight.end(), op) ==
                                before.in_flight.end();
                       });
  };
  int completions_posted = 0;
  for (size_t i = 1; i < b.h.store.history.size(); ++i) {
    const core::ClusterStatus& before = b.h.store.history[i - 1];
    const core::ClusterStatus& now = b.h.store.history[i];
    if (gains(before.rollout, now.rollout)) {
      EXPECT_TRUE(b.h.store.waited[i]) << now.message;
    }
    if (!b.h.store.waited[i] && now.rollout.in_flight.size() < before.rollout.in_flight.size()) {
      ++completions_posted;
      EXPECT_THAT(now.message, HasSubstr("etcd snapshot"));
    }
  }
  EXPECT_EQ(completions_posted, 1) << "the snapshot's rest did not carry the completion";
}

// The rollout module's log lines while the test runs.
class CapturedLog {
 public:
  CapturedLog() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)) {
    ModuleLogger("rollout")->sinks().push_back(sink_);
  }
  ~CapturedLog() {
    auto& sinks = ModuleLogger("rollout")->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  int Count(const std::string& needle) const {
    const std::string text = text_.str();
    int n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++n;
    }
    return n;
  }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

// A background step is logged (at info) when it starts and when it ends, not at every look.
TEST(RolloutReconcilerTest, ABackgroundStepIsLoggedWhenItStartsAndWhenItEnds) {
  CapturedLog log;
  BackgroundHarness b;
  b.RunToFirstInstall();
  for (int i = 0; i < 20; ++i) static_cast<void>(b.ReconcileAndAdvance());
  EXPECT_EQ(log.Count("phase=UpgradingTalos action=install-image node=w-0 "), 1);
  EXPECT_EQ(b.ReleaseAndRunToRest().kind, ReconcileOutcome::Kind::kDone);
  EXPECT_EQ(log.Count("phase=UpgradingTalos action=install-image node=w-0 "), 1);
  EXPECT_EQ(log.Count("action=install-image node=w-0 result="), 1);
  EXPECT_EQ(log.Count("phase=UpgradingTalos action=drain-node node=w-1 "), 1);
  EXPECT_EQ(log.Count("action=drain-node node=w-1 result="), 1);
}

TEST(RolloutReconcilerTest, InvalidProfileIsBlockedAndNamesTheFile) {
  Harness h;
  core::Diagnostics problems = {{"clusters/prod.yaml", 7, 3, "spec.talos.version", "bad"}};
  auto snapshot = std::make_shared<DesiredSnapshot>();
  snapshot->commit = "bad1";
  snapshot->profiles.invalid = {{"clusters/prod.yaml", "prod", problems}};
  h.desired.Publish(snapshot);
  auto r = h.Make();
  ReconcileOutcome o = r->Reconcile("prod", {});
  EXPECT_EQ(o.kind, ReconcileOutcome::Kind::kStalled);
  EXPECT_THAT(h.store.latest.at("prod").message, HasSubstr("clusters/prod.yaml:7:3"));
  EXPECT_TRUE(h.executor.calls.empty());
}

TEST(RolloutReconcilerTest, DryRunActsOnNothing) {
  Harness h;
  auto r = h.Make(/*dry_run=*/true);
  EXPECT_NE(r->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kTransientError);
  EXPECT_TRUE(h.executor.calls.empty());
  EXPECT_THAT(h.store.latest.at("prod").message, HasSubstr("dry run, not done: "));
}

TEST(RolloutReconcilerTest, UnusableCredentialsStallWithAStatus) {
  Harness h;
  h.observer.error = absl::FailedPreconditionError("credentials prod: cannot read talosconfig");
  auto r = h.Make();
  EXPECT_EQ(r->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kStalled);
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kBlocked);
  h.observer.error = absl::UnavailableError("down");
  EXPECT_EQ(r->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kTransientError);
}

TEST(RolloutReconcilerTest, ARemovedClusterIsForgotten) {
  Harness h;
  auto r = h.Make();
  EXPECT_EQ(r->Reconcile("gone", {}).kind, ReconcileOutcome::Kind::kForget);
}

// Health checks answered from a script: all healthy or all failing.
class ScriptedGates final : public gates::HealthGateRunner {
 public:
  std::vector<core::GateResult> Check(const core::ClusterProfile& profile,
                                      std::stop_token) override {
    ++checks;
    std::vector<core::GateResult> out;
    for (const core::HealthCheck& c : profile.policy.health_checks) {
      out.push_back({c.name, healthy, healthy ? "HTTP 200" : "HTTP 503, expected 200", {}});
    }
    return out;
  }
  bool healthy = false;
  int checks = 0;
};

// A Kubernetes upgrade runner whose task, once started, runs until the test ends.
class RecordingUpgrades final : public k8s_upgrade::KubernetesUpgradeRunner {
 public:
  k8s_upgrade::UpgradeTaskStatus Ensure(const core::ClusterProfile&, const core::Version& target,
                                        const core::SupportMatrix&) override {
    ensured.push_back(target.ToString());
    k8s_upgrade::UpgradeTaskStatus status;
    status.target = target.ToString();
    status.progress = "kubelets 1/5";
    return status;
  }
  bool Started(const std::string&, const core::Version& target) override {
    return std::find(ensured.begin(), ensured.end(), target.ToString()) != ensured.end();
  }
  std::vector<std::string> ensured;
};

TEST(RolloutReconcilerTest, HealthChecksHoldTheKubernetesUpgradeUntilTheyPass) {
  Harness h("1.12.0", "1.12.0");
  h.world.profile().kubernetes_version = core::testing_fixtures::V("1.35.0");
  core::HealthCheck check;
  check.name = "ingress";
  check.spec = core::HttpCheck{.endpoint = {.url = "http://127.0.0.1:9/healthz", .ca_file = ""},
                               .expect_status = 200};
  h.world.profile().policy.health_checks = {check};
  h.Publish(h.world.profile(), {});
  ScriptedGates gates;
  RecordingUpgrades upgrades;
  h.gates = &gates;
  auto r = h.Make();
  r->SetKubernetesUpgrades(&upgrades);

  EXPECT_EQ(r->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_EQ(gates.checks, 1);
  EXPECT_TRUE(upgrades.ensured.empty()) << "the Kubernetes upgrade started past a failing gate";
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kWaitingForGate);
  EXPECT_THAT(h.store.latest.at("prod").message, HasSubstr("ingress: HTTP 503, expected 200"));

  gates.healthy = true;
  h.world.AdvanceTo(h.world.now() + std::chrono::seconds(10));
  EXPECT_EQ(r->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_EQ(upgrades.ensured, (std::vector<std::string>{"1.35.0"}));
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kUpgradingKubernetes);

  // Once started, the upgrade is followed, not held again (its kubelet restarts make nodes
  // NotReady for a while).
  gates.healthy = false;
  const int checks = gates.checks;
  h.world.observed().nodes[3].ready = false;
  EXPECT_EQ(r->Reconcile("prod", {}).kind, ReconcileOutcome::Kind::kRequeueAfter);
  EXPECT_EQ(gates.checks, checks);
  EXPECT_EQ(upgrades.ensured.size(), 2u);
  EXPECT_THAT(h.store.latest.at("prod").message, HasSubstr("kubelets 1/5"));
}

// The status an upstream cluster recorded: Ready on `talos` since `since`.
core::ClusterStatus ReadyUpstream(const std::string& name, const std::string& talos,
                                  core::TimePoint since) {
  core::ClusterStatus s;
  s.cluster = name;
  s.phase = core::ClusterPhase::kReady;
  s.updated = since;
  s.talos.current = talos;
  s.kubernetes.current = "1.34.1";
  s.conditions.push_back({"Ready", true, "Ready", "", since});
  return s;
}

TEST(RolloutReconcilerTest, PromotionReadsUpstreamClustersFromTheStatusBranch) {
  Harness h;
  h.world.profile().promotion = core::Promotion{{{"staging", 3, 5}}, std::chrono::hours(1)};
  h.Publish(h.world.profile(), {});
  // Only this process's records: staging was never seen, so prod waits.
  auto alone = h.Make();
  static_cast<void>(alone->Reconcile("prod", {}));
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kWaitingForPromotion);
  EXPECT_TRUE(h.executor.calls.empty());

  // Another replica recorded staging on the branch: 40 minutes Ready, then past the soak.
  MemoryStatusStore branch;
  branch.latest["staging"] =
      ReadyUpstream("staging", "1.12.0", h.world.now() - std::chrono::minutes(40));
  h.peers = &branch;
  auto r = h.Make();
  static_cast<void>(r->Reconcile("prod", {}));
  EXPECT_EQ(h.store.latest.at("prod").phase, core::ClusterPhase::kWaitingForPromotion);
  EXPECT_THAT(h.store.latest.at("prod").message,
              HasSubstr("waiting for staging (Ready on 1.12.0 for 40m of 1h)"));
  EXPECT_TRUE(h.executor.calls.empty());
  h.world.AdvanceTo(h.world.now() + std::chrono::minutes(20));
  static_cast<void>(r->Reconcile("prod", {}));
  ASSERT_FALSE(h.executor.calls.empty());
  EXPECT_EQ(h.executor.calls.front(), "call-upgrade w-0");  // below 1.13: no pre-pull first
}

}  // namespace
}  // namespace tr::reconciler
