// No status record contradicts its own node rows (issue 48): random rollouts of a schematic
// profile (a node with a schematic of its own among them), nodes going down mid-reboot and
// coming back, extensions that cannot be read, each observation passed through
// WithLastKnownVersions as the reconciler does and recorded on top of the previous status.
// Every record's aggregates must agree with its rows (AggregateContradictions), and the
// progress must count the rows at the step's target by the rollout's own rule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "core/rollout_checks.h"
#include "core/status.h"
#include "core/status_consistency.h"
#include "fmt/format.h"
#include "tests/support/fleet_fixtures.h"

namespace tr::core {
namespace {

using namespace testing_fixtures;
using ::testing::IsEmpty;

const TimePoint kStart = *ParseTimestamp("2026-12-01T02:00:00Z");

class RolloutWalk {
 public:
  explicit RolloutWalk(uint64_t seed) : rng_(seed) {
    profile_ = GpuWorkerProfile(nodes_);
    // Every node starts on the old version and the empty schematic's neighbour 'a'.
    for (NodeObservation& n : observed_.nodes) n.schematic = std::string(64, 'a');
    if (Roll(2) == 0) profile_.talos_version = V("1.11.6");  // a schematic move alone
  }

  // One observation and its record; the contradictions found, with the step that made them.
  std::vector<std::string> Step(int step) {
    Mutate();
    const ObservedCluster seen =
        WithLastKnownVersions(observed_, previous_ ? &*previous_ : nullptr);
    const ClusterPlan plan = PlanCluster(profile_, seen, SupportMatrix::BuiltIn(), catalog_);
    const TimePoint now = kStart + std::chrono::minutes(step);
    const RolloutMemory memory = Memory(now);
    const RolloutDecision decision = DecideNextAction({profile_, plan, seen, memory, {}, {}, now});
    StatusInput in;
    in.cluster = "prod";
    in.previous = previous_ ? &*previous_ : nullptr;
    in.profile = &profile_;
    in.plan = &plan;
    in.observed = &seen;
    in.decision = &decision;
    in.memory = memory;
    in.catalog = &catalog_;
    in.desired_commit = "c0ffee";
    in.now = now;
    previous_ = BuildClusterStatus(in);
    std::vector<std::string> found = AggregateContradictions(*previous_, &profile_);
    // The progress counts the rows that moved to the step's target, by the rollout's rule.
    int moved = 0;
    const Version target = TalosStepTarget(profile_, plan);
    for (const NodeStatus& row : previous_->nodes) {
      absl::StatusOr<Version> talos = ParseTalosVersion(row.talos);
      const std::optional<std::string> schematic =
          row.schematic.empty() ? std::nullopt : std::optional(row.schematic);
      if (talos.ok() && CountsAsMoved(profile_, row.name, target, *talos, schematic)) ++moved;
    }
    const std::string counted = fmt::format("{}/{}", moved, previous_->nodes.size());
    if (previous_->talos.progress != counted) {
      found.push_back(fmt::format("talos.progress {} but the rows count {}",
                                  previous_->talos.progress, counted));
    }
    return found;
  }

 private:
  int Roll(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  // One node changes: it goes down (as the observer sees a rebooting node: nothing read), comes
  // back on the desired version and schematic or on the old ones, or its extensions go unread.
  void Mutate() {
    NodeObservation& n = observed_.nodes[static_cast<size_t>(Roll(5))];
    switch (Roll(4)) {
      case 0:
        n.reachable = false;
        n.talos.reset();
        n.kubelet.reset();
        n.schematic.reset();
        break;
      case 1:
        n.reachable = true;
        n.extensions_observed = true;
        n.talos = profile_.talos_version;
        n.kubelet = V("1.34.1");
        n.schematic = DesiredSchematicId(profile_, n.name);
        n.boot_id = fmt::format("boot-{}", Roll(1000));
        break;
      case 2:
        n.reachable = true;
        n.extensions_observed = true;
        if (!n.talos) {
          n.talos = V("1.11.6");
          n.kubelet = V("1.34.1");
        }
        n.schematic = std::string(64, 'a');
        break;
      default:
        if (n.reachable) {
          n.extensions_observed = false;
          n.schematic.reset();
        }
        break;
    }
  }

  // A node that does not answer is one in flight (rebooting into the desired version).
  RolloutMemory Memory(TimePoint now) const {
    for (const NodeObservation& n : observed_.nodes) {
      if (!n.reachable) return NodeInFlight(n.name, profile_.talos_version.ToString(), now);
    }
    return {};
  }

  std::mt19937_64 rng_;
  std::vector<NodeDef> nodes_ = FiveNodes("1.11.6", "1.34.1");
  ClusterProfile profile_;
  ObservedCluster observed_ = MakeObserved(nodes_);
  ReleaseCatalog catalog_ = ReleaseCatalog::BuiltIn();
  std::optional<ClusterStatus> previous_;
};

TEST(StatusPropertyTest, NoRecordContradictsItsOwnNodeRows) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    RolloutWalk walk(seed);
    for (int step = 0; step < 60; ++step) {
      const std::vector<std::string> found = walk.Step(step);
      ASSERT_THAT(found, IsEmpty()) << "seed " << seed << ", step " << step;
    }
  }
}

// The case: a node rebooting into the new version on the old schematic keeps the
// cluster's current schematic the old one.
TEST(StatusPropertyTest, ANodeRebootingOnTheOldSchematicKeepsTheCurrentSchematicOld) {
  std::vector<NodeDef> nodes = FiveNodes("1.11.6", "1.34.1");
  ClusterProfile profile = GpuWorkerProfile(nodes);
  profile.talos_version = V("1.11.6");
  ObservedCluster observed = MakeObserved(nodes);
  for (NodeObservation& n : observed.nodes) n.schematic = std::string(64, 'b');
  observed.nodes[4].schematic = std::string(64, 'd');
  observed.nodes[0].schematic = std::string(64, 'a');  // cp-0 not moved yet
  const ReleaseCatalog catalog = ReleaseCatalog::BuiltIn();
  auto record = [&](const ObservedCluster& seen, const ClusterStatus* previous, TimePoint now) {
    const ClusterPlan plan = PlanCluster(profile, seen, SupportMatrix::BuiltIn(), catalog);
    const RolloutMemory memory = NodeInFlight("cp-0", "1.11.6", now);
    const RolloutDecision decision = DecideNextAction({profile, plan, seen, memory, {}, {}, now});
    StatusInput in;
    in.cluster = "prod";
    in.previous = previous;
    in.profile = &profile;
    in.plan = &plan;
    in.observed = &seen;
    in.decision = &decision;
    in.memory = memory;
    in.catalog = &catalog;
    in.desired_commit = "c0ffee";
    in.now = now;
    return BuildClusterStatus(in);
  };
  const ClusterStatus before = record(observed, nullptr, kStart);
  ASSERT_EQ(before.talos.schematic_current, std::string(64, 'a'));
  observed.nodes[0].reachable = false;  // cp-0 reboots: nothing can be read
  observed.nodes[0].schematic.reset();
  observed.nodes[0].talos.reset();
  const ClusterStatus rebooting =
      record(WithLastKnownVersions(observed, &before), &before, kStart + std::chrono::minutes(1));
  EXPECT_FALSE(rebooting.nodes[0].reachable);
  EXPECT_EQ(rebooting.nodes[0].schematic, std::string(64, 'a'));
  EXPECT_EQ(rebooting.talos.schematic_current, std::string(64, 'a'));
  EXPECT_EQ(rebooting.talos.progress, "4/5");
  EXPECT_THAT(AggregateContradictions(rebooting, &profile), IsEmpty());
}

}  // namespace
}  // namespace tr::core
