#include "reconciler/k8s_upgrade/machine_config.h"

#include <vector>

#include "core/version.h"
#include "yaml-cpp/yaml.h"

namespace tr::reconciler::k8s_upgrade {
namespace {

struct FieldPath {
  const char* section;  // "cluster" or "machine"
  const char* key;      // "apiServer", ...
};

FieldPath PathOf(Component component) {
  switch (component) {
    case Component::kApiServer:
      return {"cluster", "apiServer"};
    case Component::kControllerManager:
      return {"cluster", "controllerManager"};
    case Component::kScheduler:
      return {"cluster", "scheduler"};
    case Component::kKubeProxy:
      return {"cluster", "proxy"};
    case Component::kKubelet:
      return {"machine", "kubelet"};
  }
  return {"machine", "kubelet"};
}

struct Documents {
  std::vector<YAML::Node> docs;
  size_t v1alpha1 = 0;
};

absl::StatusOr<Documents> Load(const std::string& config_yaml) {
  try {
    Documents d;
    d.docs = YAML::LoadAll(config_yaml);
    for (size_t i = 0; i < d.docs.size(); ++i) {
      const YAML::Node& doc = d.docs[i];
      if (doc.IsMap() && doc["version"] && doc["version"].as<std::string>("") == "v1alpha1") {
        d.v1alpha1 = i;
        return d;
      }
    }
  } catch (const YAML::Exception& e) {
    // The parser's message may quote the text (secrets): say only where it failed.
    return absl::InvalidArgumentError("machine config: YAML error at line " +
                                      std::to_string(e.mark.line + 1));
  }
  return absl::InvalidArgumentError("machine config: no v1alpha1 document");
}

}  // namespace

std::string_view ComponentName(Component component) {
  switch (component) {
    case Component::kApiServer:
      return "kube-apiserver";
    case Component::kControllerManager:
      return "kube-controller-manager";
    case Component::kScheduler:
      return "kube-scheduler";
    case Component::kKubeProxy:
      return "kube-proxy";
    case Component::kKubelet:
      return "kubelet";
  }
  return "kubelet";
}

absl::StatusOr<std::string> ConfiguredImage(const std::string& config_yaml, Component component) {
  absl::StatusOr<Documents> d = Load(config_yaml);
  if (!d.ok()) return d.status();
  const FieldPath path = PathOf(component);
  // Map lookups on a const node that lacks the key give invalid nodes: check each level.
  auto child = [](const YAML::Node& n, const char* key) {
    return n.IsMap() && n[key] ? n[key] : YAML::Node(YAML::NodeType::Undefined);
  };
  const YAML::Node image =
      child(child(child(d->docs[d->v1alpha1], path.section), path.key), "image");
  return image.IsScalar() ? image.as<std::string>() : std::string();
}

absl::StatusOr<std::string> WithImage(const std::string& config_yaml, Component component,
                                      const std::string& image) {
  absl::StatusOr<Documents> d = Load(config_yaml);
  if (!d.ok()) return d.status();
  const FieldPath path = PathOf(component);
  YAML::Node doc = d->docs[d->v1alpha1];
  doc[path.section][path.key]["image"] = image;
  std::string out;
  for (size_t i = 0; i < d->docs.size(); ++i) {
    YAML::Emitter emitter;
    emitter << d->docs[i];
    if (i > 0) out += "---\n";
    out += emitter.c_str();
    out += "\n";
  }
  return out;
}

std::string RetaggedImage(const std::string& image, const std::string& version) {
  const size_t slash = image.rfind('/');
  const size_t colon = image.rfind(':');
  std::string repository = image;
  std::string suffix;
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    repository = image.substr(0, colon);
    const std::string tag = image.substr(colon + 1);
    for (const char* s : {"-fat", "-slim"}) {
      if (tag.ends_with(s)) suffix = s;
    }
  }
  return repository + ":v" + version + suffix;
}

std::string ImageKubernetesVersion(const std::string& image) {
  const size_t colon = image.rfind(':');
  const size_t slash = image.rfind('/');
  if (colon == std::string::npos || (slash != std::string::npos && colon < slash)) return "";
  std::string tag = image.substr(colon + 1);
  for (const char* s : {"-fat", "-slim"}) {
    if (tag.ends_with(s)) tag.resize(tag.size() - std::string_view(s).size());
  }
  absl::StatusOr<core::Version> v = core::ParseKubernetesVersion(tag);
  return v.ok() ? v->ToString() : "";
}

}  // namespace tr::reconciler::k8s_upgrade
