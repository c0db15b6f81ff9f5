#include "reconciler/kube/drain.h"

#include "fmt/format.h"

namespace tr::reconciler::kube {

bool DrainSkips(const KubePod& pod) {
  return pod.owner_kind == "DaemonSet" || pod.mirror || pod.terminal;
}

absl::Status DrainNode(KubeClient& client, const std::string& node, const DrainOptions& options,
                       Env& env, std::stop_token stop) {
  if (absl::Status s = client.SetUnschedulable(node, true); !s.ok()) return s;
  const auto deadline = env.Now() + options.timeout;
  std::string last_refusal;
  while (true) {
    absl::StatusOr<std::vector<KubePod>> pods = client.ListPodsOnNode(node);
    if (!pods.ok()) return pods.status();
    // Every pod still listed is left, including those evicted earlier and still terminating.
    std::vector<std::string> left;
    for (const KubePod& pod : *pods) {
      if (DrainSkips(pod)) continue;
      left.push_back(pod.namespace_name + "/" + pod.name);
      absl::Status evicted = client.EvictPod(pod.namespace_name, pod.name);
      if (evicted.ok() || absl::IsNotFound(evicted)) continue;
      if (!absl::IsResourceExhausted(evicted)) return evicted;
      last_refusal = std::string(evicted.message());
    }
    if (left.empty()) return absl::OkStatus();
    if (env.Now() >= deadline) {
      return absl::FailedPreconditionError(fmt::format(
          "drain of {} timed out after {}s: {} pod(s) left ({}); last refusal: {}", node,
          std::chrono::duration_cast<std::chrono::seconds>(options.timeout).count(), left.size(),
          fmt::join(left, ", "), last_refusal));
    }
    if (!env.SleepFor(options.retry_interval, stop)) {
      return absl::CancelledError(fmt::format("drain of {} cancelled", node));
    }
  }
}

}  // namespace tr::reconciler::kube
