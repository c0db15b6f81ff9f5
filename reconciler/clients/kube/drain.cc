#include "reconciler/clients/kube/drain.h"

#include "fmt/format.h"

namespace tr::reconciler::kube {
namespace {

// What one round of evictions left on the node.
struct EvictionRound {
  std::vector<KubePod> left;  // every pod still listed, including those evicted and terminating
  std::string last_refusal;   // the message of the last 429, naming its budget
  std::string refused_pod;    // "<namespace>/<name>" of that 429's pod
};

absl::StatusOr<EvictionRound> EvictAll(KubeClient& client, const std::string& node) {
  absl::StatusOr<std::vector<KubePod>> pods = client.ListPodsOnNode(node);
  if (!pods.ok()) return pods.status();
  EvictionRound round;
  for (const KubePod& pod : *pods) {
    if (DrainSkips(pod)) continue;
    round.left.push_back(pod);
    absl::Status evicted = client.EvictPod(pod.namespace_name, pod.name);
    if (evicted.ok() || absl::IsNotFound(evicted)) continue;
    if (!absl::IsResourceExhausted(evicted)) return evicted;
    round.last_refusal = std::string(evicted.message());
    round.refused_pod = pod.namespace_name + "/" + pod.name;
  }
  return round;
}

std::vector<std::string> Names(const std::vector<KubePod>& pods) {
  std::vector<std::string> names;
  for (const KubePod& pod : pods) names.push_back(pod.namespace_name + "/" + pod.name);
  return names;
}

// kForce past the timeout: DELETE what the budgets would not let go. A pod already gone
// counts as deleted.
absl::StatusOr<DrainResult> DeleteLeft(KubeClient& client, const std::vector<KubePod>& left) {
  for (const KubePod& pod : left) {
    absl::Status deleted = client.DeleteObject(
        fmt::format("/api/v1/namespaces/{}/pods/{}", pod.namespace_name, pod.name),
        R"({"apiVersion":"v1","kind":"DeleteOptions"})");
    if (!deleted.ok() && !absl::IsNotFound(deleted)) return deleted;
  }
  return DrainResult{Names(left)};
}

}  // namespace

bool DrainSkips(const KubePod& pod) {
  return pod.owner_kind == "DaemonSet" || pod.mirror || pod.terminal;
}

absl::StatusOr<DrainResult> DrainNode(KubeClient& client, const std::string& node,
                                      const DrainOptions& options, Env& env, std::stop_token stop) {
  if (absl::Status s = client.SetUnschedulable(node, true); !s.ok()) return s;
  const auto deadline = env.Now() + options.timeout;
  while (true) {
    absl::StatusOr<EvictionRound> round = EvictAll(client, node);
    if (!round.ok()) return round.status();
    if (round->left.empty()) return DrainResult{};
    if (options.on_held && !round->refused_pod.empty()) {
      options.on_held(fmt::format("held by {} ({})", round->refused_pod, round->last_refusal));
    }
    if (env.Now() >= deadline) {
      if (options.on_timeout == core::DrainTimeoutAction::kForce) {
        return DeleteLeft(client, round->left);
      }
      return absl::FailedPreconditionError(fmt::format(
          "drain of {} timed out after {}s: {} pod(s) left ({}); last refusal: {}; the node "
          "was not rebooted (policy.drain.onTimeout: halt)",
          node, std::chrono::duration_cast<std::chrono::seconds>(options.timeout).count(),
          round->left.size(), fmt::join(Names(round->left), ", "), round->last_refusal));
    }
    if (!env.SleepFor(options.retry_interval, stop)) {
      return absl::CancelledError(fmt::format("drain of {} cancelled", node));
    }
  }
}

}  // namespace tr::reconciler::kube
