// The workloads of the bootstrap manifests on the fake Kubernetes API: the kube-proxy DaemonSet
// and the CoreDNS Deployment in kube-system, read with GET and changed with a server-side apply
// (PATCH, Content-Type application/apply-patch+yaml, fieldManager required), as `talosctl
// upgrade-k8s` syncs the manifests Talos renders. Only the container image is modelled: an apply
// that names another image rolls the workload out (SimCluster::SetBootstrapWorkloadImageLocked);
// other fields are accepted and not kept. Field ownership conflicts are not modelled.
#include <httplib.h>

#include "fmt/format.h"
#include "tests/sim/kube_api.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim {
namespace {

using nlohmann::json;

struct BootstrapWorkload {
  const char* plural;  // "daemonsets"
  const char* kind;    // "DaemonSet"
  const char* name;    // also the container's name
};

constexpr BootstrapWorkload kWorkloads[] = {{"daemonsets", "DaemonSet", "kube-proxy"},
                                            {"deployments", "Deployment", "coredns"}};

json Failure(int code, const char* reason, const std::string& message) {
  return {{"kind", "Status"},   {"apiVersion", "v1"}, {"status", "Failure"},
          {"message", message}, {"reason", reason},   {"code", code}};
}

json WorkloadJson(const BootstrapWorkload& w, const std::string& image) {
  return {{"kind", w.kind},
          {"apiVersion", "apps/v1"},
          {"metadata", {{"name", w.name}, {"namespace", "kube-system"}}},
          {"spec",
           {{"selector", {{"matchLabels", {{"k8s-app", w.name}}}}},
            {"template",
             {{"metadata", {{"labels", {{"k8s-app", w.name}}}}},
              {"spec", {{"containers", json::array({{{"name", w.name}, {"image", image}}})}}}}}}}};
}

// The image an apply body gives the workload's container; "" when it names none. A body that is
// not YAML, or names another object, is refused as the API server does.
absl::StatusOr<std::string> AppliedImage(const BootstrapWorkload& w, const std::string& body) {
  try {
    const YAML::Node object = YAML::Load(body);
    if (!object.IsMap() || object["kind"].as<std::string>("") != w.kind ||
        object["metadata"]["name"].as<std::string>("") != w.name) {
      return absl::InvalidArgumentError(
          fmt::format("the apply names another object than {} kube-system/{}", w.kind, w.name));
    }
    const YAML::Node containers = object["spec"]["template"]["spec"]["containers"];
    if (!containers.IsSequence()) return std::string();
    for (const YAML::Node& c : containers) {
      if (c["name"].as<std::string>("") == w.name) return c["image"].as<std::string>("");
    }
    return std::string();
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("error decoding YAML: {}", e.what()));
  }
}

}  // namespace

void KubeApiServer::BootstrapWorkloadRoutes() {
  for (const BootstrapWorkload& w : kWorkloads) {
    const std::string path =
        fmt::format("/apis/apps/v1/namespaces/kube-system/{}/{}", w.plural, w.name);
    const std::string key = fmt::format("{}/{}", w.plural, w.name);
    server_->Get(path, [this, w, key](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(cluster_->mu());
      res.status = 200;
      res.set_content(WorkloadJson(w, cluster_->BootstrapWorkloadImageLocked(key)).dump(),
                      "application/json");
    });
    server_->Patch(path, [this, w, key](const httplib::Request& req, httplib::Response& res) {
      auto reply = [&](int code, const json& body) {
        res.status = code;
        res.set_content(body.dump(), "application/json");
      };
      if (req.get_header_value("Content-Type").find("apply-patch+yaml") == std::string::npos) {
        return reply(415, Failure(415, "UnsupportedMediaType",
                                  "this fake accepts only server-side apply "
                                  "(application/apply-patch+yaml) here"));
      }
      if (req.get_param_value("fieldManager").empty()) {
        return reply(400, Failure(400, "BadRequest",
                                  "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: "
                                  "Required value: is required for apply patch"));
      }
      absl::StatusOr<std::string> image = AppliedImage(w, req.body);
      if (!image.ok()) {
        return reply(400, Failure(400, "BadRequest", std::string(image.status().message())));
      }
      std::lock_guard lock(cluster_->mu());
      if (!image->empty()) cluster_->SetBootstrapWorkloadImageLocked(key, *image);
      reply(200, WorkloadJson(w, cluster_->BootstrapWorkloadImageLocked(key)));
    });
  }
}

}  // namespace tr::sim
