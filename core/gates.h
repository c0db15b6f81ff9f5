// What holds a planned rollout, and how long it is expected to take: the parts of a plan that
// follow from the profile's policy and the steps (docs/architecture.md).
//
// Pure; thread-compatible.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/observed.h"
#include "core/planner.h"
#include "core/profile.h"
#include "core/start_checks.h"

namespace tr::core {

// The gates of a plan, in the order they apply, as lines a person reads: first the start checks
// the rollout enforces (start_checks.h, the same list), then what each step does around its
// nodes. With `answers` (from the recorded statuses), each health check shows its last answer
// and the promotion where it stands.
std::vector<std::string> PlanGates(const ClusterProfile& profile, const ClusterPlan& plan,
                                   const StartCheckAnswers* answers = nullptr);

// Expected wall time: per Talos batch the slowest node (its recorded duration, else
// kDefaultTalosNodeDuration) plus the settle time; per Kubernetes step the control-plane
// components of each control plane and every kubelet.
std::chrono::seconds EstimateDuration(const ClusterProfile& profile,
                                      const ObservedCluster& observed, const ClusterPlan& plan);

}  // namespace tr::core
