// Property tests: random fleets and version pairs, fixed seeds, invariants on every plan.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "core/planner.h"
#include "tests/support/fleet_fixtures.h"

namespace tr::core {
namespace {

using namespace testing_fixtures;

struct RandomCase {
  ClusterProfile profile;
  ObservedCluster observed;
};

std::string RandomTalos(std::mt19937& rng) {
  return "1." + std::to_string(std::uniform_int_distribution(5, 15)(rng)) + "." +
         std::to_string(std::uniform_int_distribution(0, 9)(rng));
}

std::string RandomKubernetes(std::mt19937& rng) {
  return "1." + std::to_string(std::uniform_int_distribution(24, 38)(rng)) + "." +
         std::to_string(std::uniform_int_distribution(0, 9)(rng));
}

RandomCase MakeRandomCase(std::mt19937& rng) {
  const int control_planes = std::uniform_int_distribution(1, 5)(rng);
  const int workers = std::uniform_int_distribution(0, 6)(rng);
  const std::string talos = RandomTalos(rng), kube = RandomKubernetes(rng);
  std::vector<NodeDef> nodes;
  const int leader = std::uniform_int_distribution(0, control_planes - 1)(rng);
  for (int i = 0; i < control_planes; ++i) {
    nodes.push_back({"cp-" + std::to_string(i), NodeRole::kControlPlane, talos, kube, i == leader});
  }
  for (int i = 0; i < workers; ++i) {
    nodes.push_back({"w-" + std::to_string(i), NodeRole::kWorker, talos, kube});
  }
  const std::string talos_target = RandomTalos(rng), kube_target = RandomKubernetes(rng);
  // Some nodes already moved part of the way (a rollout in progress).
  for (NodeDef& n : nodes) {
    if (std::uniform_int_distribution(0, 4)(rng) == 0 && V(talos) < V(talos_target)) {
      n.talos = talos_target;
    }
  }
  RandomCase c{MakeProfile(nodes, talos_target, kube_target), {}};
  c.profile.policy.max_parallel_workers = std::uniform_int_distribution(1, 3)(rng);
  c.profile.policy.allow_downgrade = std::uniform_int_distribution(0, 3)(rng) == 0;
  c.profile.policy.upgrade_order = std::uniform_int_distribution(0, 1)(rng) == 0
                                       ? UpgradeOrder::kTalosFirst
                                       : UpgradeOrder::kKubernetesFirst;
  std::string self;
  if (!nodes.empty() && std::uniform_int_distribution(0, 1)(rng) == 0) {
    self = nodes[std::uniform_int_distribution<size_t>(0, nodes.size() - 1)(rng)].name;
  }
  c.observed = MakeObserved(nodes, self);
  return c;
}

bool IsControlPlane(const ClusterProfile& p, const std::string& name) {
  for (const NodeSpec& n : p.nodes) {
    if (n.name == name) return n.role == NodeRole::kControlPlane;
  }
  ADD_FAILURE() << "plan names unknown node " << name;
  return false;
}

void CheckInvariants(const RandomCase& c, const ClusterPlan& plan, const SupportMatrix& matrix) {
  if (plan.status != PlanStatus::kPlanned) return;
  std::map<std::string, Version> talos_of, kubelet_of;
  for (const NodeObservation& n : c.observed.nodes) {
    talos_of[n.name] = *n.talos;
    kubelet_of[n.name] = *n.kubelet;
  }
  Version talos = *plan.talos_current, kube = *plan.kubernetes_current;
  for (const PlanStep& step : plan.steps) {
    bool seen_control_plane = false;
    for (const auto& batch : step.batches) {
      int control_planes = 0;
      for (const std::string& name : batch) control_planes += IsControlPlane(c.profile, name);
      EXPECT_LE(control_planes, 1) << "two control planes in one batch";
      if (control_planes > 0) {
        EXPECT_EQ(batch.size(), 1u);
      }
      if (step.type == StepType::kTalos) {
        if (control_planes > 0) {
          seen_control_plane = true;
        } else {
          EXPECT_FALSE(seen_control_plane) << "worker after a control plane";
        }
      }
    }
    auto& current = step.type == StepType::kTalos ? talos_of : kubelet_of;
    for (const std::string& name : step.Nodes()) {
      EXPECT_NE(current[name], step.to) << name << " already runs " << step.to.ToString();
      current[name] = step.to;
    }
    if (step.type == StepType::kTalos) {
      if (talos < step.to) {
        EXPECT_TRUE(matrix.AllowsUpgrade(step.from, step.to.Minor()))
            << "Talos hop below its minimum source: " << step.from.ToString();
      }
      EXPECT_LE(std::abs(MinorDistance(talos.Minor(), step.to.Minor())), 1);
      talos = step.to;
    } else {
      EXPECT_LE(MinorDistance(kube.Minor(), step.to.Minor()), 1) << "Kubernetes minor skipped";
      kube = step.to;
    }
    EXPECT_TRUE(matrix.Supports(talos.Minor(), kube.Minor()))
        << "unsupported pair Talos " << talos.ToString() << " Kubernetes " << kube.ToString();
  }
  for (const auto& [name, v] : talos_of) EXPECT_EQ(v, c.profile.talos_version) << name;
  for (const auto& [name, v] : kubelet_of) EXPECT_EQ(v, c.profile.kubernetes_version) << name;
}

TEST(PlannerPropertyTest, RandomFleetsKeepEveryInvariant) {
  const SupportMatrix matrix = SupportMatrix::BuiltIn();
  const ReleaseCatalog catalog = ReleaseCatalog::BuiltIn();
  std::map<PlanStatus, int> outcomes;
  for (unsigned seed = 1; seed <= 4000; ++seed) {
    std::mt19937 rng(seed);
    RandomCase c = MakeRandomCase(rng);
    ClusterPlan plan = PlanCluster(c.profile, c.observed, matrix, catalog);
    ++outcomes[plan.status];
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + plan.message);
    CheckInvariants(c, plan, matrix);
    if (plan.status == PlanStatus::kBlocked) {
      EXPECT_FALSE(plan.message.empty());
    }
    if (HasFailure()) return;
  }
  // The generator must exercise planned and blocked plans, or the invariants prove nothing.
  EXPECT_GT(outcomes[PlanStatus::kPlanned], 200);
  EXPECT_GT(outcomes[PlanStatus::kBlocked], 200);
}

}  // namespace
}  // namespace tr::core
