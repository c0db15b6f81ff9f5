#include "tests/sim/catalog/config_documents.h"

#include <algorithm>
#include <set>
#include <vector>

#include "fmt/format.h"
#include "tests/sim/common/yaml_child.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim {
namespace {

constexpr ComponentPlace kPlaces[] = {
    {"kube-apiserver", "KubeAPIServerConfig", "cluster", "apiServer", true},
    {"kube-controller-manager", "KubeControllerManagerConfig", "cluster", "controllerManager",
     true},
    {"kube-scheduler", "KubeSchedulerConfig", "cluster", "scheduler", true},
    {"kube-proxy", "KubeProxyConfig", "cluster", "proxy", true},
    {"kubelet", "KubeletConfig", "machine", "kubelet", false},
};

// The texts of types/k8s/*.go (v1.14.0-rc.1): V1Alpha1ConflictValidate, then Validate's empty
// image ("<name> image cannot be empty").
struct ComponentRules {
  const char* conflict;
  const char* legacy_machine_key;  // .machine.controlplane.<key> also conflicts; "" = none
  const char* conflict_machine;
  const char* image_name;
  bool can_disable;  // `enabled: false` skips the image check
};

ComponentRules RulesOf(std::string_view component) {
  if (component == "kube-apiserver") {
    return {"kube-apiserver config is already set in v1alpha1 config (.cluster.apiServer)", "", "",
            "kube-apiserver", false};
  }
  if (component == "kube-controller-manager") {
    return {
        "kube-controller-manager config is already set in v1alpha1 config "
        "(.cluster.controllerManager)",
        "controllerManager",
        "kube-controller-manager config is already set in v1alpha1 config "
        "(.machine.controlplane.controllerManager)",
        "kube-controller-manager", true};
  }
  if (component == "kube-scheduler") {
    return {"kube-scheduler config is already set in v1alpha1 config (.cluster.scheduler)",
            "scheduler",
            "kube-scheduler config is already set in v1alpha1 config "
            "(.machine.controlplane.scheduler)",
            "scheduler", true};
  }
  if (component == "kube-proxy") {
    return {
        "cluster proxy config in v1alpha1 config (.machine.cluster.proxy) can't be used with "
        "KubeProxyConfig document, please remove it to avoid conflicts",
        "", "", "proxy", true};
  }
  return {"kubelet config is already set in v1alpha1 config (.machine.kubelet)", "", "", "kubelet",
          false};
}

// A section Go decodes into a non-nil pointer: present and not null.
bool Present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

std::string Scalar(const YAML::Node& n) { return n.IsScalar() ? n.as<std::string>() : ""; }

// hashicorp/go-multierror's ListFormatFunc, as machined's InvalidArgument carries it.
std::string MultiError(const std::vector<std::string>& errors) {
  if (errors.size() == 1) return "1 error occurred:\n\t* " + errors[0] + "\n\n";
  std::string points;
  for (const std::string& e : errors) points += (points.empty() ? "* " : "\n\t* ") + e;
  return fmt::format("{} errors occurred:\n\t{}\n\n", errors.size(), points);
}

const ComponentPlace* PlaceOfKind(const std::string& kind) {
  for (const ComponentPlace& p : kPlaces) {
    if (kind == p.kind) return &p;
  }
  return nullptr;
}

struct Loaded {
  bool found = false;
  YAML::Node v1alpha1;
  std::vector<YAML::Node> documents;  // the others, in order
};

absl::StatusOr<Loaded> Load(const std::string& data) {
  Loaded loaded;
  try {
    for (const YAML::Node& doc : YAML::LoadAll(data)) {
      if (!doc.IsMap()) continue;
      if (!loaded.found && Scalar(YamlChild(doc, "version")) == "v1alpha1") {
        loaded.v1alpha1 = doc;
        loaded.found = true;
      } else {
        loaded.documents.push_back(doc);
      }
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("failed to parse config: {}", e.what()));
  }
  if (!loaded.found) {
    // internal/app/machined/internal/server/v1alpha1/v1alpha1_server.go, outside maintenance.
    return absl::InvalidArgumentError(
        "the applied machine configuration doesn't contain v1alpha1 config, did you mean to "
        "patch the machine config instead?");
  }
  return loaded;
}

// The errors of validate.go in its order: documents, conflicts, container.
std::vector<std::string> Validate(const Loaded& loaded) {
  const YAML::Node machine = YamlChild(loaded.v1alpha1, "machine");
  const YAML::Node cluster = YamlChild(loaded.v1alpha1, "cluster");
  std::vector<std::string> document_errors, conflicts;
  std::set<std::string> control_plane_kinds;
  for (const YAML::Node& doc : loaded.documents) {
    const std::string kind = Scalar(YamlChild(doc, "kind"));
    if (kind == "UnattendedInstallConfig" && Present(YamlChild(machine, "install"))) {
      conflicts.push_back(
          "UnattendedInstallConfig config is incompatible with v1alpha1 config "
          "(.machine.install)");
    }
    const ComponentPlace* place = PlaceOfKind(kind);
    if (place == nullptr) continue;
    const ComponentRules rules = RulesOf(place->component);
    const bool disabled = rules.can_disable && YamlChild(doc, "enabled").IsScalar() &&
                          !YamlChild(doc, "enabled").as<bool>(true);
    if (!disabled && Scalar(YamlChild(doc, "image")).empty()) {
      document_errors.push_back(
          fmt::format("{}: {} image cannot be empty", kind, rules.image_name));
    }
    const YAML::Node section = place->section == std::string_view("cluster") ? cluster : machine;
    if (Present(YamlChild(section, place->key))) {
      conflicts.push_back(rules.conflict);
    } else if (*rules.legacy_machine_key != '\0' &&
               Present(YamlChild(YamlChild(machine, "controlplane"), rules.legacy_machine_key))) {
      conflicts.push_back(rules.conflict_machine);
    }
    if (place->control_plane_only) control_plane_kinds.insert(kind);
  }
  const std::string type = Scalar(YamlChild(machine, "type"));
  if (!control_plane_kinds.empty() && type != "controlplane" && type != "init") {
    // Go's %v of a sorted []string: "[A B]".
    std::string kinds;
    for (const std::string& k : control_plane_kinds) kinds += (kinds.empty() ? "" : " ") + k;
    conflicts.push_back(fmt::format(
        "the following document kinds are only allowed on control plane machines: [{}]", kinds));
  }
  document_errors.insert(document_errors.end(), conflicts.begin(), conflicts.end());
  return document_errors;
}

}  // namespace

std::span<const ComponentPlace> ComponentPlaces() { return kPlaces; }

bool InDocument(ConfigShape shape, core::MinorVersion talos, std::string_view component) {
  switch (shape) {
    case ConfigShape::kGenerated:
      return GeneratedMultidoc(shape, talos);
    case ConfigShape::kV1Alpha1:
      return false;
    case ConfigShape::kMigrated:
      return true;
    case ConfigShape::kPartlyMigrated:
      return component == "kubelet";
  }
  return false;
}

bool GeneratedMultidoc(ConfigShape shape, core::MinorVersion talos) {
  return shape == ConfigShape::kGenerated && talos >= core::MinorVersion{1, 14};
}

std::string ComponentDocument(const ComponentPlace& place, const std::string& image) {
  return fmt::format("---\napiVersion: v1alpha1\nkind: {}\nimage: {}\n", place.kind, image);
}

absl::StatusOr<ConfigContents> ReadConfig(const std::string& data) {
  absl::StatusOr<Loaded> loaded = Load(data);
  if (!loaded.ok()) return loaded.status();
  const YAML::Node machine = YamlChild(loaded->v1alpha1, "machine");
  if (!machine.IsMap()) {
    return absl::InvalidArgumentError("1 error occurred:\n\t* machine instructions are required");
  }
  if (std::vector<std::string> errors = Validate(*loaded); !errors.empty()) {
    return absl::InvalidArgumentError(MultiError(errors));
  }
  ConfigContents contents;
  YAML::Emitter out;
  out << YamlChild(machine, "type") << YamlChild(machine, "install");
  contents.reboot_fields = out.c_str();
  const YAML::Node cluster = YamlChild(loaded->v1alpha1, "cluster");
  for (const ComponentPlace& place : kPlaces) {
    const YAML::Node section = place.section == std::string_view("cluster") ? cluster : machine;
    std::string image = Scalar(YamlChild(YamlChild(section, place.key), "image"));
    for (const YAML::Node& doc : loaded->documents) {
      if (Scalar(YamlChild(doc, "kind")) == place.kind) image = Scalar(YamlChild(doc, "image"));
    }
    if (!image.empty()) contents.images[place.component] = image;
  }
  return contents;
}

}  // namespace tr::sim
