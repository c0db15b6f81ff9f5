// Decoders of the Kubernetes API's answers into the client's types. The API server is
// authenticated, but what it answers is still bytes from the network (a proxy, another
// version, a bug): a field of another type or a list that is not one decodes to what is there
// (empty strings, zero counts, no items) and never throws or reads past the JSON's end.
// scripts/fuzz's kube_answer_fuzz holds them to that.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/workload_readiness.h"
#include "nlohmann/json.hpp"
#include "reconciler/clients/kube/kube_client.h"

namespace tr::reconciler::kube {

// The items of a `NodeList`, `PodList` or a list of Deployments, StatefulSets or DaemonSets.
std::vector<KubeNode> NodesFromList(const nlohmann::json& list);
std::vector<KubePod> PodsFromList(const nlohmann::json& list);
std::vector<KubePodDetail> PodDetailsFromList(const nlohmann::json& list);
std::vector<core::WorkloadStatus> WorkloadsFromList(std::string_view kind,
                                                    const nlohmann::json& list);
// One Deployment, StatefulSet or DaemonSet (`kind`): its rollout counters.
core::WorkloadStatus WorkloadFromJson(std::string_view kind, const nlohmann::json& item);
// Whether an object's `status` lists a condition of `type` whose status is "True".
bool ConditionTrue(const nlohmann::json& status, const char* type);
// How many items a list holds; 0 when `items` is missing or not a list.
size_t ItemCount(const nlohmann::json& list);

// A list's metadata.resourceVersion ("" when it has none).
std::string ListVersion(const nlohmann::json& list);

// One line of a watch of Nodes: the event, or, for an ERROR event (or a line that is no
// event), no event and the error: the Status's code (0 when it has none), reason and message.
struct NodeWatchLine {
  std::optional<NodeWatchEvent> event;
  int error_code = 0;
  std::string error_reason;
  std::string error_message;
};
// Read without building the line as a document (node_watch_line.cc): what a Node line holds
// beyond the fields of a KubeNode is skipped as it is parsed.
NodeWatchLine NodeWatchLineFromJson(std::string_view line);

// The `message` and `reason` of a `Status` answer (an error's body), the message followed by
// the messages of details.causes in parentheses when there are some; empty when the body is
// not one.
struct ApiError {
  std::string message;
  std::string reason;
};
ApiError ApiErrorFromBody(std::string_view body);

}  // namespace tr::reconciler::kube
