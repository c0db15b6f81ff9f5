// An API that Kubernetes 1.32 removes, podschedulingcontexts.v1alpha3.resource.k8s.io: served
// with one object while a node of the cluster has the removed_api_in_use fault (an old alpha API
// someone enabled and still uses), not served (404) otherwise.
#include <httplib.h>

#include "tests/sim/api/kube_api.h"

namespace tr::sim {

void KubeApiServer::RemovedApiRoutes() {
  server_->Get("/apis/resource.k8s.io/v1alpha3/podschedulingcontexts", [this](
                                                                           const httplib::Request&,
                                                                           httplib::Response& res) {
    std::lock_guard lock(cluster_->mu());
    nlohmann::json body;
    if (!cluster_->AnyNodeHasFaultLocked(FaultKind::kRemovedApiInUse)) {
      res.status = 404;
      body = {
          {"kind", "Status"},     {"apiVersion", "v1"},
          {"status", "Failure"},  {"message", "the server could not find the requested resource"},
          {"reason", "NotFound"}, {"code", 404}};
    } else {
      res.status = 200;
      body = {
          {"kind", "PodSchedulingContextList"},
          {"apiVersion", "resource.k8s.io/v1alpha3"},
          {"metadata", {{"resourceVersion", "1"}}},
          {"items", nlohmann::json::array(
                        {{{"metadata", {{"name", "gpu-claim-ctx"}, {"namespace", "default"}}}}})}};
    }
    res.set_content(body.dump(), "application/json");
  });
}

}  // namespace tr::sim
