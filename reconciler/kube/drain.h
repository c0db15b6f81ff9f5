// Cordon and drain a node through the Kubernetes API, as `kubectl drain --ignore-daemonsets
// --delete-emptydir-data` does, honouring PodDisruptionBudgets: evictions a budget refuses
// (429) are retried until the drain timeout.
//
// Thread-compatible; blocks the calling thread (sleeping through the injected Env).
#pragma once

#include <chrono>
#include <stop_token>
#include <string>

#include "absl/status/status.h"
#include "base/env.h"
#include "reconciler/kube/kube_client.h"

namespace tr::reconciler::kube {

struct DrainOptions {
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds retry_interval{std::chrono::seconds(5)};
};

// Pods a drain leaves alone: DaemonSet pods, static pods' mirrors, finished pods.
bool DrainSkips(const KubePod& pod);

// Cordons `node`, then evicts its pods until none is left to evict. OK when drained;
// FailedPrecondition naming the pods still there (and why) after `timeout` — the cluster will
// not let the node go, which waiting longer does not fix; Cancelled on stop; the client's error
// for anything else.
absl::Status DrainNode(KubeClient& client, const std::string& node, const DrainOptions& options,
                       Env& env, std::stop_token stop);

}  // namespace tr::reconciler::kube
