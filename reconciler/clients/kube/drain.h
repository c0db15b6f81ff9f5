// Cordon and drain a node through the Kubernetes API, as `kubectl drain --ignore-daemonsets
// --delete-emptydir-data` does, honouring PodDisruptionBudgets: evictions a budget refuses
// (429) are retried until the drain timeout. What happens then is the profile's choice
// (policy.drain.onTimeout): fail, or delete the pods left as `kubectl drain
// --disable-eviction` does, past their budgets.
//
// Thread-compatible; blocks the calling thread (sleeping through the injected Env).
#pragma once

#include <chrono>
#include <functional>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "core/profile.h"
#include "reconciler/clients/kube/kube_client.h"

namespace tr::reconciler::kube {

struct DrainOptions {
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds retry_interval{std::chrono::seconds(5)};
  core::DrainTimeoutAction on_timeout = core::DrainTimeoutAction::kHalt;
  // Told after each round of evictions that left pods behind, with what holds the drain:
  // "held by default/db-0 (Cannot evict pod ...: The disruption budget db needs 1 healthy
  // pods and has 1 currently)". Called on the drain's thread.
  std::function<void(const std::string&)> on_held{};
};

struct DrainResult {
  // "namespace/name" of the pods deleted (not evicted) past the timeout with kForce; empty when
  // every pod left by eviction.
  std::vector<std::string> forced;
};

// Pods a drain leaves alone: DaemonSet pods, static pods' mirrors, finished pods.
bool DrainSkips(const KubePod& pod);

// Cordons `node`, then evicts its pods until none is left to evict. OK when drained. After
// `timeout` with pods left: kHalt gives FailedPrecondition naming the node, the pods still
// there and the last refusal (the budget) — the cluster will not let the node go, which
// waiting longer does not fix; kForce deletes those pods (a plain DELETE, which no budget
// checks) and is OK with them in `forced`. Cancelled on stop; the client's error for anything
// else.
absl::StatusOr<DrainResult> DrainNode(KubeClient& client, const std::string& node,
                                      const DrainOptions& options, Env& env, std::stop_token stop);

}  // namespace tr::reconciler::kube
