#include "reconciler/clients/kube/workload_reads.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "base/percent_encoding.h"
#include "reconciler/clients/kube/workload_json.h"
#include "reconciler/runtime/json_fields.h"

namespace tr::reconciler::kube {
namespace {

using nlohmann::json;

absl::Status Prefixed(const absl::Status& status, const std::string& what) {
  return absl::Status(status.code(), absl::StrCat("list ", what, ": ", status.message()));
}

// Every page of the list at `path`, one at a time; `what` names it in errors. At most
// `max_items` items (ResourceExhausted past them).
absl::Status EachPage(KubeClient& client, const std::string& path, const std::string& what,
                      size_t page, size_t max_items, const std::function<void(const json&)>& visit) {
  std::string token;
  size_t items = 0;
  do {
    std::string url = absl::StrCat(path, "?limit=", page);
    if (!token.empty()) absl::StrAppend(&url, "&continue=", PercentEncode(token));
    absl::StatusOr<std::string> text = client.GetObject(url);
    if (!text.ok()) return Prefixed(text.status(), what);
    const json list = json::parse(*text, nullptr, false);
    if (list.is_discarded()) return absl::InternalError("list " + what + ": not JSON");
    items += json_fields::List(list, "items").size();
    if (items > max_items) {
      return absl::ResourceExhaustedError(
          absl::StrCat("list ", what, ": more than ", max_items, " to forecast"));
    }
    visit(list);
    token = json_fields::Text(json_fields::Field(list, "metadata"), "continue");
  } while (!token.empty());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<core::ClusterWorkloads> ReadClusterWorkloads(KubeClient& client,
                                                            const WorkloadReadLimits& limits) {
  const size_t page = limits.page;
  const size_t many = limits.max_pods;
  std::vector<std::string> local_classes;
  absl::Status s = EachPage(client, "/apis/storage.k8s.io/v1/storageclasses", "storageclasses",
                            page, many, [&](const json& list) { AddLocalClasses(list, local_classes); });
  if (!s.ok()) return s;
  std::map<std::string, std::string> pinned;  // volume → node
  s = EachPage(client, "/api/v1/persistentvolumes", "persistentvolumes", page, many,
               [&](const json& list) { AddPinnedVolumes(list, pinned); });
  if (!s.ok()) return s;
  ClaimNodes claims;
  s = EachPage(client, "/api/v1/persistentvolumeclaims", "persistentvolumeclaims", page, many,
               [&](const json& list) { AddClaims(list, pinned, local_classes, claims); });
  if (!s.ok()) return s;
  core::ClusterWorkloads w;
  s = EachPage(client, "/api/v1/nodes", "nodes", page, many,
               [&](const json& list) { AddNodes(list, w.nodes); });
  if (!s.ok()) return s;
  s = EachPage(client, "/apis/policy/v1/poddisruptionbudgets", "poddisruptionbudgets", page, many,
               [&](const json& list) { AddBudgets(list, w.budgets); });
  if (!s.ok()) return s;
  s = EachPage(client, "/api/v1/pods", "pods", page, many,
               [&](const json& list) { AddPods(list, claims, w.pods); });
  if (!s.ok()) return s;
  return w;
}

}  // namespace tr::reconciler::kube
