#include "core/disruption_forecast.h"

#include <algorithm>
#include <set>

#include "core/planner.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

constexpr const char* kHostnameLabel = "kubernetes.io/hostname";
// Beyond this many nodes in a step no other order is tried (each try replays every drain).
constexpr size_t kMaxNodesToReorder = 12;

bool Selects(const LabelSet& selector, const LabelSet& labels) {
  return std::all_of(selector.begin(), selector.end(), [&](const auto& kv) {
    auto it = labels.find(kv.first);
    return it != labels.end() && it->second == kv.second;
  });
}

bool Tolerates(const WorkloadPod& pod, const WorkloadNode& node) {
  if (pod.tolerates_all) return true;
  return std::all_of(node.taints.begin(), node.taints.end(), [&](const std::string& taint) {
    return std::find(pod.tolerations.begin(), pod.tolerations.end(), taint) !=
           pod.tolerations.end();
  });
}

std::string PodName(const WorkloadPod& pod) { return pod.namespace_name + "/" + pod.name; }

int Ceil(int total, int percent) { return (total * percent + 99) / 100; }

// One drain after another on a copy of the workloads, with the pods indexed by node and by
// budget so that a cluster of tens of thousands of pods plays in well under a second.
class DrainPlay {
 public:
  explicit DrainPlay(const ClusterWorkloads& workloads) : w_(workloads) {
    for (size_t n = 0; n < w_.nodes.size(); ++n) {
      w_.nodes[n].labels.emplace(kHostnameLabel, w_.nodes[n].name);
      node_index_[w_.nodes[n].name] = n;
    }
    gone_.assign(w_.pods.size(), false);
    budgets_of_.resize(w_.pods.size());
    pods_of_.resize(w_.budgets.size());
    std::map<std::string, std::vector<size_t>> budgets_in;  // by namespace
    for (size_t b = 0; b < w_.budgets.size(); ++b) {
      budgets_in[w_.budgets[b].namespace_name].push_back(b);
    }
    for (size_t i = 0; i < w_.pods.size(); ++i) {
      const WorkloadPod& pod = w_.pods[i];
      if (!pod.node.empty()) Place(i, pod.node, true);
      if (pod.terminal) continue;
      for (size_t b : budgets_in[pod.namespace_name]) {
        if (!Selects(w_.budgets[b].selector, pod.labels)) continue;
        budgets_of_[i].push_back(b);
        pods_of_[b].push_back(i);
      }
    }
  }

  // Cordons the batch and drains each node of it; what each met.
  std::vector<NodeDrainForecast> DrainBatch(const std::vector<std::string>& batch) {
    for (const std::string& name : batch) SetSchedulable(name, false);
    std::vector<NodeDrainForecast> out;
    for (const std::string& name : batch) out.push_back({name, {}, 0, {}, {}});
    // A drain retries: what one node's eviction frees may let another go.
    for (bool moved = true; moved;) {
      moved = false;
      for (NodeDrainForecast& node : out) moved |= EvictRound(node);
    }
    for (NodeDrainForecast& node : out) NameBlocked(node);
    return out;
  }

  // The batch rebooted and back: uncordoned, and the pods waiting for room scheduled again.
  void Return(const std::vector<std::string>& batch) {
    for (const std::string& name : batch) SetSchedulable(name, true);
    for (size_t i = 0; i < w_.pods.size(); ++i) {
      const WorkloadPod& pod = w_.pods[i];
      if (gone_[i] || !pod.node.empty() || pod.owner_kind.empty()) continue;
      if (const WorkloadNode* to = Destination(i, "")) MoveTo(i, to->name);
    }
  }

 private:
  std::vector<size_t> PodsOn(const std::string& node) const {
    auto it = on_node_.find(node);
    if (it == on_node_.end()) return {};
    return {it->second.begin(), it->second.end()};
  }

  bool Drains(size_t i) const {
    const WorkloadPod& pod = w_.pods[i];
    return pod.owner_kind != "DaemonSet" && !pod.mirror && !pod.terminal;
  }

  const WorkloadNode* FindNode(const std::string& name) const {
    auto it = node_index_.find(name);
    return it == node_index_.end() ? nullptr : &w_.nodes[it->second];
  }

  void SetSchedulable(const std::string& name, bool schedulable) {
    auto it = node_index_.find(name);
    if (it != node_index_.end()) w_.nodes[it->second].schedulable = schedulable;
  }

  // Pod `i` counted on `node` or taken off it.
  void Place(size_t i, const std::string& node, bool on) {
    const int keeps_away = w_.pods[i].anti_affinity.empty() ? 0 : 1;
    if (on) {
      on_node_[node].insert(i);
      keeping_away_[node] += keeps_away;
    } else {
      on_node_[node].erase(i);
      keeping_away_[node] -= keeps_away;
    }
  }

  // Pod `i` now on `node` (empty: Pending), Ready there when placed.
  void MoveTo(size_t i, const std::string& node) {
    WorkloadPod& pod = w_.pods[i];
    if (!pod.node.empty()) Place(i, pod.node, false);
    pod.node = node;
    pod.ready = !node.empty();  // a drain retries until the replacement is Ready
    if (!node.empty()) Place(i, node, true);
  }

  void Remove(size_t i) {
    MoveTo(i, "");
    gone_[i] = true;
  }

  bool Healthy(const WorkloadPod& pod) const {
    const WorkloadNode* node = pod.node.empty() ? nullptr : FindNode(pod.node);
    return pod.ready && node != nullptr && node->ready;
  }

  // The budget's expected pods, the healthy ones and how many it needs healthy.
  struct BudgetCount {
    int expected = 0;
    int healthy = 0;
    int needed = 0;
  };

  BudgetCount Count(size_t b) const {
    BudgetCount c;
    const DisruptionBudget& budget = w_.budgets[b];
    // An int minAvailable expects the pods there are; the rest expect what the controllers
    // scale to, which a pod without one is not part of.
    const bool scaled = !budget.min_available || budget.min_available->percent;
    for (size_t i : pods_of_[b]) {
      if (gone_[i] || (scaled && w_.pods[i].owner_kind.empty())) continue;
      ++c.expected;
      if (Healthy(w_.pods[i])) ++c.healthy;
    }
    if (budget.min_available) {
      const CountOrPercent& m = *budget.min_available;
      c.needed = m.percent ? Ceil(c.expected, m.value) : m.value;
    } else if (budget.max_unavailable) {
      const CountOrPercent& m = *budget.max_unavailable;
      c.needed = std::max(0, c.expected - (m.percent ? Ceil(c.expected, m.value) : m.value));
    }
    return c;
  }

  // Why the first budget that refuses pod `i`'s eviction now does; empty when none does.
  std::string Refusal(size_t i) const {
    const bool healthy = Healthy(w_.pods[i]);
    if (budgets_of_[i].size() > 1) {
      const DisruptionBudget& a = w_.budgets[budgets_of_[i][0]];
      const DisruptionBudget& b = w_.budgets[budgets_of_[i][1]];
      return fmt::format(
          "budgets {}/{} and {}/{} both select it: the eviction API refuses a pod under more "
          "than one budget",
          a.namespace_name, a.name, b.namespace_name, b.name);
    }
    for (size_t b : budgets_of_[i]) {
      const BudgetCount c = Count(b);
      // An unhealthy pod may go while its budget is healthy (IfHealthyBudget, the default).
      const bool allowed = healthy ? c.healthy - c.needed > 0 : c.healthy >= c.needed;
      if (!allowed) return BudgetRefusal(w_.budgets[b], c.needed, c.healthy);
    }
    return "";
  }

  bool Fits(size_t i, const WorkloadNode& node, const std::string& from) const {
    const WorkloadPod& pod = w_.pods[i];
    if (node.name == from || !node.schedulable || !node.ready) return false;
    if (!Selects(pod.node_selector, node.labels) || !Tolerates(pod, node)) return false;
    if (!pod.bound_node.empty() && pod.bound_node != node.name) return false;
    auto there = on_node_.find(node.name);
    auto kept = keeping_away_.find(node.name);
    const bool affinity = !pod.anti_affinity.empty() ||
                          (kept != keeping_away_.end() && kept->second > 0);
    if (affinity && there != on_node_.end()) {
      for (size_t j : there->second) {
        const WorkloadPod& other = w_.pods[j];
        if (j == i || other.namespace_name != pod.namespace_name) continue;
        for (const LabelSet& away : pod.anti_affinity) {
          if (Selects(away, other.labels)) return false;
        }
        for (const LabelSet& away : other.anti_affinity) {
          if (Selects(away, pod.labels)) return false;
        }
      }
    }
    return SpreadAllows(i, node);
  }

  // Every hostname spread constraint of the pod still within its skew with the pod on `node`.
  // The domains are the nodes the pod's selector allows, cordoned ones included (the
  // scheduler's default nodeTaintsPolicy, Ignore).
  bool SpreadAllows(size_t i, const WorkloadNode& node) const {
    const WorkloadPod& pod = w_.pods[i];
    for (const HostSpread& spread : pod.spread) {
      int fewest = INT32_MAX;
      int here = 0;
      for (const WorkloadNode& n : w_.nodes) {
        if (!Selects(pod.node_selector, n.labels)) continue;
        int count = 0;
        for (size_t j : PodsOn(n.name)) {
          const WorkloadPod& other = w_.pods[j];
          count += j != i && other.namespace_name == pod.namespace_name &&
                   Selects(spread.selector, other.labels);
        }
        fewest = std::min(fewest, count);
        if (n.name == node.name) here = count;
      }
      if (here + 1 - fewest > spread.max_skew) return false;
    }
    return true;
  }

  size_t Load(const std::string& node) const {
    auto it = on_node_.find(node);
    return it == on_node_.end() ? 0 : it->second.size();
  }

  // The node the scheduler would give pod `i`'s replacement, leaving `from`; null when none.
  const WorkloadNode* Destination(size_t i, const std::string& from) const {
    const WorkloadNode* best = nullptr;
    size_t best_load = 0;
    for (const WorkloadNode& node : w_.nodes) {
      if (!Fits(i, node, from)) continue;
      const size_t load = Load(node.name);
      if (best == nullptr || load < best_load) best = &node, best_load = load;
    }
    return best;
  }

  // Why no node can take pod `i` (leaving `from`): the first rule that rules the nodes out.
  std::string NoRoomReason(size_t i, const std::string& from) const {
    const WorkloadPod& pod = w_.pods[i];
    const std::string until = ": Pending until the node is back";
    if (!pod.bound_node.empty()) return "its volume binds it to " + pod.bound_node + until;
    bool selectable = false;
    for (const WorkloadNode& node : w_.nodes) {
      selectable |= node.name != from && Selects(pod.node_selector, node.labels);
    }
    if (!selectable) return "its node selector matches no other node" + until;
    bool tolerated = false;
    for (const WorkloadNode& node : w_.nodes) tolerated |= node.name != from && Tolerates(pod, node);
    if (!tolerated) return "it tolerates the taints of no other node" + until;
    if (!pod.anti_affinity.empty()) {
      return "its required anti-affinity leaves no other node free" + until;
    }
    if (!pod.spread.empty()) {
      return "its topology spread (DoNotSchedule) allows no other node" + until;
    }
    return "no other node is schedulable and Ready" + until;
  }

  // `forced`: a blocked pod deleted past the timeout, already named with its budget.
  void Evicted(size_t i, NodeDrainForecast& node, bool forced = false) {
    const WorkloadPod& pod = w_.pods[i];
    const std::string name = PodName(pod);
    if (pod.empty_dir) {
      node.hazards.push_back({HazardKind::kLocalData, name, "its emptyDir data is lost"});
    }
    for (const std::string& path : pod.host_paths) {
      node.hazards.push_back({HazardKind::kLocalData, name,
                              fmt::format("its hostPath {} stays behind on {}", path, node.node)});
    }
    if (pod.owner_kind.empty()) {
      node.hazards.push_back({HazardKind::kUnmanaged, name,
                              "no controller: the drain deletes it and nothing recreates it"});
      Remove(i);
      return;
    }
    if (const WorkloadNode* to = Destination(i, node.node)) {
      MoveTo(i, to->name);
      return;
    }
    if (!forced) node.hazards.push_back({HazardKind::kNoRoom, name, NoRoomReason(i, node.node)});
    MoveTo(i, "");
  }

  // Evicts what the budgets allow on the node now; true when a pod went.
  bool EvictRound(NodeDrainForecast& node) {
    bool moved = false;
    for (size_t i : PodsOn(node.node)) {
      if (!Drains(i) || !Refusal(i).empty()) continue;
      Evicted(i, node);
      moved = true;
    }
    return moved;
  }

  // The pods still on the node are blocked, each naming its budget; then forced away (as the
  // drain would delete them, or as the forecast goes on past a halt).
  void NameBlocked(NodeDrainForecast& node) {
    for (size_t i : PodsOn(node.node)) {
      if (!Drains(i)) continue;
      const std::string refusal = Refusal(i);  // empty: what was forced before freed it
      if (refusal.empty()) {
        Evicted(i, node);
        continue;
      }
      auto moved = forced_from_.find(i);
      node.hazards.push_back(
          {HazardKind::kBudget, PodName(w_.pods[i]),
           moved == forced_from_.end()
               ? refusal
               : refusal + " (it came here when " + moved->second + " was forced)"});
      ++node.blocked;
      Evicted(i, node, true);
      if (!w_.pods[i].node.empty()) forced_from_[i] = node.node;
    }
  }

  ClusterWorkloads w_;
  std::map<std::string, size_t> node_index_;
  std::map<std::string, std::set<size_t>> on_node_;  // ordered: the drain's order is stable
  std::map<std::string, int> keeping_away_;  // per node, its pods with required anti-affinity
  std::map<size_t, std::string> forced_from_;  // a blocked pod forced away: the node it left
  std::vector<bool> gone_;
  std::vector<std::vector<size_t>> budgets_of_;  // per pod, the budgets selecting it
  std::vector<std::vector<size_t>> pods_of_;     // per budget, the pods it selects
};

std::vector<NodeDrainForecast> Play(const ClusterWorkloads& workloads,
                                    const std::vector<std::vector<std::string>>& batches) {
  DrainPlay play(workloads);
  std::vector<NodeDrainForecast> nodes;
  for (const std::vector<std::string>& batch : batches) {
    for (NodeDrainForecast& n : play.DrainBatch(batch)) nodes.push_back(std::move(n));
    play.Return(batch);
  }
  return nodes;
}

bool AnyBlocked(const std::vector<NodeDrainForecast>& nodes) {
  return std::any_of(nodes.begin(), nodes.end(), [](const auto& n) { return n.blocked > 0; });
}

// `batches` with `node` moved to position `to` of the flattened order, in batches of the same
// sizes. Workers stay before control planes because only the batches' sizes are kept and the
// caller moves a node within its own run of batches.
std::vector<std::vector<std::string>> Moved(const std::vector<std::vector<std::string>>& batches,
                                            size_t from, size_t to) {
  std::vector<std::string> flat;
  for (const auto& batch : batches) flat.insert(flat.end(), batch.begin(), batch.end());
  const std::string node = flat[from];
  flat.erase(flat.begin() + static_cast<std::ptrdiff_t>(from));
  flat.insert(flat.begin() + static_cast<std::ptrdiff_t>(to), node);
  std::vector<std::vector<std::string>> out;
  size_t at = 0;
  for (const auto& batch : batches) {
    out.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(at),
                     flat.begin() + static_cast<std::ptrdiff_t>(at + batch.size()));
    at += batch.size();
  }
  return out;
}

bool SameBatches(const std::vector<std::vector<std::string>>& a,
                 const std::vector<std::vector<std::string>>& b) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::set<std::string>(a[i].begin(), a[i].end()) !=
        std::set<std::string>(b[i].begin(), b[i].end())) {
      return false;
    }
  }
  return true;
}

// The first single move of one node to another place in the order (a worker among workers, a
// control plane among control planes) that lets every drain finish, said in a line; empty when
// none does or the step is too large to try.
std::string BetterOrder(const ClusterWorkloads& workloads,
                        const std::vector<std::vector<std::string>>& batches,
                        const std::set<std::string>& control_planes) {
  std::vector<std::string> flat;
  for (const auto& batch : batches) flat.insert(flat.end(), batch.begin(), batch.end());
  if (flat.size() > kMaxNodesToReorder) return "";
  for (size_t from = 0; from < flat.size(); ++from) {
    for (size_t to = 0; to < flat.size(); ++to) {
      if (to == from || control_planes.contains(flat[from]) != control_planes.contains(flat[to])) {
        continue;
      }
      const auto order = Moved(batches, from, to);
      if (SameBatches(order, batches)) continue;  // the nodes of a batch drain at once
      if (AnyBlocked(Play(workloads, order))) continue;
      const std::string& other = flat[to];
      return fmt::format("draining {} {} {} lets every drain finish", flat[from],
                         to < from ? "before" : "after", other);
    }
  }
  return "";
}

std::string StepName(const PlanStep& step) {
  return fmt::format("Talos {} → {}", step.from.ToString(), step.to.ToString());
}

}  // namespace

const char* HazardKindName(HazardKind kind) {
  switch (kind) {
    case HazardKind::kBudget:
      return "budget";
    case HazardKind::kNoRoom:
      return "no-room";
    case HazardKind::kUnmanaged:
      return "unmanaged";
    case HazardKind::kLocalData:
      return "local-data";
  }
  return "budget";
}

std::string BudgetRefusal(const DisruptionBudget& budget, int needed, int healthy) {
  return fmt::format("budget {}/{} allows no eviction (needs {} healthy, has {})",
                     budget.namespace_name, budget.name, needed, healthy);
}

DrainForecast ForecastDrains(const ClusterWorkloads& workloads,
                             const std::vector<std::vector<std::string>>& batches, bool force) {
  DrainForecast forecast;
  forecast.force = force;
  forecast.nodes = Play(workloads, batches);
  if (!AnyBlocked(forecast.nodes)) return forecast;
  std::set<std::string> control_planes;
  for (const WorkloadNode& node : workloads.nodes) {
    if (node.control_plane) control_planes.insert(node.name);
  }
  forecast.better_order = BetterOrder(workloads, batches, control_planes);
  return forecast;
}

void AddDurations(DrainForecast& forecast, const ClusterPlan& plan, const ClusterProfile& profile,
                  const ClusterStatus& status) {
  using std::chrono::seconds;
  std::map<bool, std::pair<seconds, seconds>> by_role;  // control plane? → (fewest, most)
  for (const NodeStatus& node : status.nodes) {
    if (!node.last_upgrade_duration) continue;
    const seconds took = *node.last_upgrade_duration;
    auto [it, first] = by_role.try_emplace(IsControlPlane(profile, node.name), took, took);
    if (!first) it->second = {std::min(it->second.first, took), std::max(it->second.second, took)};
  }
  for (NodeDrainForecast& node : forecast.nodes) {
    auto range = by_role.find(IsControlPlane(profile, node.node));
    if (range == by_role.end()) continue;
    node.duration_low = range->second.first;
    node.duration_high = range->second.second;
  }
  const PlanStep* drained = nullptr;
  for (const PlanStep& step : plan.steps) {
    if (step.type == StepType::kTalos && UsesLifecycleApi(step.from) && drained == nullptr) {
      drained = &step;
    }
  }
  if (drained == nullptr) return;
  seconds low{0}, high{0};
  for (const auto& batch : drained->batches) {
    seconds slowest_low{0}, slowest_high{0};
    for (const std::string& name : batch) {
      auto range = by_role.find(IsControlPlane(profile, name));
      if (range == by_role.end()) return;
      slowest_low = std::max(slowest_low, range->second.first);
      slowest_high = std::max(slowest_high, range->second.second);
    }
    low += slowest_low + profile.policy.settle;
    high += slowest_high + profile.policy.settle;
  }
  forecast.duration_low = low;
  forecast.duration_high = high;
}

DrainForecast ForecastPlanDrains(const ClusterPlan& plan, const ClusterWorkloads& workloads,
                                 bool force) {
  DrainForecast forecast;
  forecast.force = force;
  const PlanStep* first = nullptr;
  for (const PlanStep& step : plan.steps) {
    if (step.type != StepType::kTalos) continue;
    if (!UsesLifecycleApi(step.from)) {
      forecast.legacy_steps.push_back(StepName(step));
    } else if (first == nullptr) {
      first = &step;
    }
  }
  if (first == nullptr) return forecast;
  DrainForecast played = ForecastDrains(workloads, first->batches, force);
  played.legacy_steps = std::move(forecast.legacy_steps);
  return played;
}

}  // namespace tr::core
