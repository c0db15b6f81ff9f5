#include "core/promotion.h"

#include <algorithm>

#include "core/duration.h"
#include "core/rollout_record.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

// The versions this cluster is about to start, for each component the plan changes.
struct Needed {
  std::optional<Version> talos;
  std::optional<Version> kubernetes;
};

Needed NeededVersions(const ClusterProfile& profile, const ClusterPlan& plan) {
  Needed n;
  for (const PlanStep& step : plan.steps) {
    if (step.type == StepType::kTalos) n.talos = profile.talos_version;
    if (step.type == StepType::kKubernetes) n.kubernetes = profile.kubernetes_version;
  }
  return n;
}

bool Started(const ClusterProfile& profile, const ClusterPlan& plan, const RolloutMemory& memory) {
  if (!memory.in_flight.empty()) return true;
  if (plan.steps.empty() || plan.steps.front().type != StepType::kTalos) return false;
  const PlanStep& step = plan.steps.front();
  // A node of the profile that the step leaves out already runs its target: below Talos 1.13
  // nothing is pre-pulled, so this is what says a legacy rollout has begun between two nodes.
  if (step.Nodes().size() < profile.nodes.size()) return true;
  if (!memory.prepulled_image.empty() && memory.prepulled_image == step.installer_image) {
    return true;
  }
  return std::any_of(step.own_installers.begin(), step.own_installers.end(),
                     [&](const auto& own) { return Prepulled(memory, own.second.image, true); });
}

// "" when `current` (a status version string) is at least `needed`; what is missing otherwise.
std::string Behind(const char* component, const std::string& current,
                   const std::optional<Version>& needed, bool talos) {
  if (!needed) return "";
  absl::StatusOr<Version> v = talos ? ParseTalosVersion(current) : ParseKubernetesVersion(current);
  if (v.ok() && *v >= *needed) return "";
  return fmt::format("{} {}, needs {}", component, current.empty() ? "unknown" : current,
                     needed->ToString());
}

std::optional<TimePoint> ReadySince(const ClusterStatus& s) {
  if (s.phase != ClusterPhase::kReady) return std::nullopt;
  for (const Condition& c : s.conditions) {
    if (c.type == "Ready" && c.status) return c.last_transition;
  }
  return std::nullopt;
}

}  // namespace

PromotionVerdict EvaluatePromotion(const ClusterProfile& profile, const ClusterPlan& plan,
                                   const RolloutMemory& memory,
                                   const std::map<std::string, ClusterStatus>& statuses,
                                   TimePoint now) {
  PromotionVerdict verdict;
  if (!profile.promotion || plan.steps.empty() || Started(profile, plan, memory)) return verdict;
  const Needed needed = NeededVersions(profile, plan);
  const auto soak = profile.promotion->soak;
  std::vector<std::string> waiting;
  bool only_time = true;
  TimePoint ready_at = now;
  for (const Promotion::After& after : profile.promotion->after) {
    auto it = statuses.find(after.cluster);
    if (it == statuses.end()) {
      waiting.push_back(after.cluster + " (no status recorded yet)");
      only_time = false;
      continue;
    }
    const ClusterStatus& s = it->second;
    std::string behind = Behind("on Talos", s.talos.current, needed.talos, true);
    if (behind.empty())
      behind = Behind("on Kubernetes", s.kubernetes.current, needed.kubernetes, false);
    const std::optional<TimePoint> since = ReadySince(s);
    if (!behind.empty() || !since) {
      waiting.push_back(fmt::format("{} ({})", after.cluster,
                                    behind.empty() ? ClusterPhaseName(s.phase) : behind));
      only_time = false;
      continue;
    }
    if (now >= *since + soak) continue;
    const auto ready_for = std::chrono::duration_cast<std::chrono::seconds>(now - *since);
    waiting.push_back(fmt::format("{} (Ready on {} for {} of {})", after.cluster, s.talos.current,
                                  FormatDuration(ready_for), FormatDuration(soak)));
    ready_at = std::max(ready_at, *since + soak);
  }
  if (waiting.empty()) return verdict;
  verdict.ready = false;
  verdict.message = "waiting for ";
  for (size_t i = 0; i < waiting.size(); ++i) verdict.message += (i ? ", " : "") + waiting[i];
  if (only_time) verdict.ready_at = ready_at;
  return verdict;
}

}  // namespace tr::core
