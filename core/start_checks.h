// The checks that must all pass before a rollout starts anything new: a Talos node (with the
// step's pre-pull and etcd snapshot) or a Kubernetes step. One list drives both sides: `plan`
// prints it (PlanGates) and DecideNextAction enforces it, in the same order, so the plan cannot
// promise a check the rollout skips, nor the rollout hold on one the plan never named.
//
// Work already begun is seen through: a node in flight, or a Kubernetes step whose upgrade
// task started, is not held by these checks.
//
// Pure; thread-compatible.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/health_gates.h"
#include "core/profile.h"

namespace tr::core {

enum class StartCheck {
  kPaused,        // policy.paused is false
  kPromotion,     // spec.promotion: every upstream cluster soaked on the new versions
  kWindow,        // inside one of policy.windows
  kNodesReady,    // every node (but those in flight) reachable, RUNNING and Ready
  kEtcdQuorum,    // every etcd member started and healthy, and enough of them to lose one
  kHealthChecks,  // every policy.healthChecks entry healthy in an answer taken just now
};

// Every check, in evaluation order (for tests that must cover each).
inline constexpr std::array kAllStartChecks = {StartCheck::kPaused,     StartCheck::kPromotion,
                                               StartCheck::kWindow,     StartCheck::kNodesReady,
                                               StartCheck::kEtcdQuorum, StartCheck::kHealthChecks};

// The checks that apply to `profile`, in evaluation order: paused, promotion, windows and
// health checks only when the profile sets them; nodes and etcd always.
std::vector<StartCheck> StartChecks(const ClusterProfile& profile);

// True for the checks about the cluster's health now (nodes, etcd, health checks), which
// matter only once something may start beside the work in flight.
bool ChecksClusterHealth(StartCheck check);

// What a cluster's recorded status says about its start checks, for `plan` to show beside them.
struct StartCheckAnswers {
  const GateState* gates = nullptr;           // the health checks' last answers
  std::optional<PromotionVerdict> promotion;  // spec.promotion, evaluated from the statuses
};

// How `plan` states `check` for `profile`: one line, or one per window / health check (the
// health checks end with the gateTimeout line). With `answers`, each health check's line ends
// with its last answer and time, the gateTimeout line with since when the rollout has waited,
// and the promotion line with where the promotion stands now.
std::vector<std::string> DescribeStartCheck(StartCheck check, const ClusterProfile& profile,
                                            const StartCheckAnswers* answers = nullptr);

}  // namespace tr::core
