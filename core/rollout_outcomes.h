// What becomes of a rollout decision once the shell has tried to act on it. The reconciler
// executes and reports; every phase transition that follows an action (a refusal halts, a step
// still running waits, a step of another action holds this one, a dry run only says) is made
// here, by pure functions tested in core like DecideNextAction itself.
//
// Pure; thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "core/profile.h"
#include "core/rollout.h"
#include "core/timestamp.h"

namespace tr::core {

// The node or the cluster refused `tried` (an error classified as one that halts): the cluster
// is UpgradeFailed with the refusal in its own words, recorded as the rollout's failure.
RolloutDecision ActionRefused(const RolloutDecision& tried, const ClusterProfile& profile,
                              std::string_view error, TimePoint now);

// `running` has not finished (a step in the background, or one the node says is already in
// progress, `why`): nothing to record but the wait; look again at `next_look`.
RolloutDecision StillRunning(const RolloutDecision& running, std::string_view why,
                             TimePoint next_look);

// Another step of the cluster (`busy_kind` on `busy_node`, "" for the whole cluster) is still
// running in the background: `held` waits for it and is decided again at `next_look`.
RolloutDecision HeldByRunningStep(const RolloutDecision& held, ActionKind busy_kind,
                                  std::string_view busy_node, TimePoint next_look);

// A dry run acts on nothing: the decision says what it would have done.
RolloutDecision DryRun(const RolloutDecision& decision);

// The cluster cannot go on until someone changes something outside the rollout (credentials,
// an installer the Image Factory cannot make): phase Blocked, with `why`.
RolloutDecision Blocked(std::string_view why);

// Whether the next look at a cluster after `decision` comes on the node poll interval: a node
// is upgrading, and its wait is not a settle time with no node in flight (waited out whole).
bool LooksAgainOnNodePoll(const RolloutDecision& decision, const RolloutMemory& memory);

// How the Kubernetes upgrade runner's task for the plan's first step stands.
struct KubernetesTask {
  enum class State { kRunning, kSucceeded, kFailed };
  State state = State::kRunning;
  std::string progress;   // kRunning: what it does now; empty before its first step
  std::string component;  // kFailed: the component that failed ("kube-apiserver", "kubelet")
  std::string node;       // kFailed: on which node, empty for the whole cluster
  std::string error;      // kFailed: the failure in the runner's words
};

// `handed` (the decision to start the Kubernetes step `step`) once the runner holds the task:
// the cluster is UpgradingKubernetes while it runs and until the nodes show it, UpgradeFailed
// when it failed (a retryable failure is started again by the runner); looked at again at
// `next_look`. Acts on nothing: the runner does the work.
RolloutDecision FollowingKubernetesTask(const RolloutDecision& handed, const PlanStep& step,
                                        const KubernetesTask& task, TimePoint next_look);

}  // namespace tr::core
