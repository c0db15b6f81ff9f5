#include "reconciler/operations/k8s_upgrade/machine_config.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "core/version.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
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

// One document of a multi-document configuration: its text exactly as given (with the `---`
// line that opens it, if any) and its parsed form.
struct Document {
  std::string text;
  YAML::Node node;
};

struct Documents {
  std::vector<Document> docs;
  size_t v1alpha1 = 0;
};

constexpr size_t kNoDocument = static_cast<size_t>(-1);

// A line that opens a new document: `---` alone or followed by a space or tab. In YAML such a
// line at column 0 ends any block scalar too, so cutting the text there is exact.
bool IsDocumentStart(std::string_view line) {
  if (!line.starts_with("---")) return false;
  return line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r' ||
         line[3] == '\n';
}

// The text cut at its document markers; the pieces concatenated give the text back.
std::vector<std::string> SplitDocuments(const std::string& text) {
  std::vector<std::string> pieces(1);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string_view line(text.data() + pos, end - pos);
    if (IsDocumentStart(line) && !pieces.back().empty()) pieces.emplace_back();
    pieces.back().append(line);
    pos = end;
  }
  return pieces;
}

absl::StatusOr<Documents> Load(const std::string& config_yaml) {
  Documents d;
  int line = 0;
  bool found = false;
  for (std::string& piece : SplitDocuments(config_yaml)) {
    try {
      YAML::Node node = YAML::Load(piece);
      if (!found && node.IsMap() && node["version"] &&
          node["version"].as<std::string>("") == "v1alpha1") {
        d.v1alpha1 = d.docs.size();
        found = true;
      }
      line += static_cast<int>(std::count(piece.begin(), piece.end(), '\n'));
      d.docs.push_back({std::move(piece), std::move(node)});
    } catch (const YAML::Exception& e) {
      // The parser's message may quote the text (secrets): say only where it failed.
      return absl::InvalidArgumentError("machine config: YAML error at line " +
                                        std::to_string(line + e.mark.line + 1));
    }
  }
  if (!found) return absl::InvalidArgumentError("machine config: no v1alpha1 document");
  return d;
}

// `n[key]`, or an undefined node when `n` is not a map or lacks the key (a const lookup of a
// missing key gives an invalid node, which throws when looked at).
YAML::Node Child(const YAML::Node& n, const char* key) {
  return n.IsMap() && n[key] ? n[key] : YAML::Node(YAML::NodeType::Undefined);
}

// The component's v1alpha1 section (`cluster.apiServer`, ...); undefined when absent.
YAML::Node Section(const Documents& d, Component component) {
  const FieldPath path = PathOf(component);
  return Child(Child(d.docs[d.v1alpha1].node, path.section), path.key);
}

// A section Go decodes into a non-nil pointer, which is what Talos's conflict check looks at.
bool Present(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

// The index of the component's own document (`kind: KubeletConfig`, ...), or kNoDocument.
size_t DocumentOf(const Documents& d, Component component) {
  for (size_t i = 0; i < d.docs.size(); ++i) {
    const YAML::Node kind = Child(d.docs[i].node, "kind");
    if (i != d.v1alpha1 && kind.IsScalar() && kind.as<std::string>() == DocumentKind(component)) {
      return i;
    }
  }
  return kNoDocument;
}

ConfigPlace Place(const Documents& d, Component component) {
  const bool document = DocumentOf(d, component) != kNoDocument;
  const bool section = Present(Section(d, component));
  if (document) return section ? ConfigPlace::kBoth : ConfigPlace::kDocument;
  return section ? ConfigPlace::kV1Alpha1 : ConfigPlace::kNone;
}

// The map the component's settings are in where that node keeps them (as talosctl's
// stdpatches.GuessVersionContract* choose): its document, else its v1alpha1 section.
YAML::Node Settings(const Documents& d, Component component) {
  const size_t doc = DocumentOf(d, component);
  return doc != kNoDocument ? d.docs[doc].node : Section(d, component);
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

std::vector<Component> ComponentsOf(bool control_plane) {
  if (!control_plane) return {Component::kKubelet};
  return {Component::kApiServer, Component::kControllerManager, Component::kScheduler,
          Component::kKubeProxy, Component::kKubelet};
}

std::string_view DocumentKind(Component component) {
  switch (component) {
    case Component::kApiServer:
      return "KubeAPIServerConfig";
    case Component::kControllerManager:
      return "KubeControllerManagerConfig";
    case Component::kScheduler:
      return "KubeSchedulerConfig";
    case Component::kKubeProxy:
      return "KubeProxyConfig";
    case Component::kKubelet:
      return "KubeletConfig";
  }
  return "KubeletConfig";
}

std::string V1Alpha1Section(Component component) {
  const FieldPath path = PathOf(component);
  return std::string(path.section) + "." + path.key;
}

absl::StatusOr<ConfigPlace> PlaceOf(const std::string& config_yaml, Component component) {
  absl::StatusOr<Documents> d = Load(config_yaml);
  if (!d.ok()) return d.status();
  return Place(*d, component);
}

absl::Status CheckPatchable(const std::string& config_yaml, Component component) {
  absl::StatusOr<Documents> d = Load(config_yaml);
  if (!d.ok()) return d.status();
  switch (Place(*d, component)) {
    case ConfigPlace::kBoth:
      return absl::FailedPreconditionError(
          fmt::format("set twice, in the {} document and in {} (Talos refuses that): keep one",
                      DocumentKind(component), V1Alpha1Section(component)));
    case ConfigPlace::kNone:
      return absl::FailedPreconditionError(
          fmt::format("no image configured (neither a {} document nor {})", DocumentKind(component),
                      V1Alpha1Section(component)));
    default:
      break;
  }
  const YAML::Node image = Child(Settings(*d, component), "image");
  if (image.IsScalar() && !image.as<std::string>().empty()) return absl::OkStatus();
  const bool document = Place(*d, component) == ConfigPlace::kDocument;
  return absl::FailedPreconditionError(
      document ? fmt::format("no image in the {} document", DocumentKind(component))
               : fmt::format("no image in {}", V1Alpha1Section(component)));
}

absl::StatusOr<std::string> ConfiguredImage(const std::string& config_yaml, Component component) {
  absl::StatusOr<Documents> d = Load(config_yaml);
  if (!d.ok()) return d.status();
  const YAML::Node image = Child(Settings(*d, component), "image");
  return image.IsScalar() ? image.as<std::string>() : std::string();
}

absl::StatusOr<std::string> InstallerImage(const std::string& config_yaml) {
  absl::StatusOr<Documents> d = Load(config_yaml);
  if (!d.ok()) return d.status();
  for (const Document& doc : d->docs) {
    const YAML::Node kind = Child(doc.node, "kind");
    if (!kind.IsScalar() || kind.as<std::string>() != "UnattendedInstallConfig") continue;
    const YAML::Node image = Child(Child(doc.node, "installer"), "image");
    if (image.IsScalar()) return image.as<std::string>();
  }
  const YAML::Node image = Child(Child(Child(d->docs[d->v1alpha1].node, "machine"), "install"),
                                 "image");
  return image.IsScalar() ? image.as<std::string>() : std::string();
}

absl::StatusOr<std::vector<std::string>> ConfiguredExtraArgs(const std::string& config_yaml,
                                                             Component component) {
  absl::StatusOr<Documents> d = Load(config_yaml);
  if (!d.ok()) return d.status();
  const YAML::Node extra = Child(Settings(*d, component), "extraArgs");
  std::vector<std::string> args;
  if (!extra.IsMap()) return args;
  for (const auto& entry : extra) {
    std::string value;
    if (entry.second.IsSequence()) {
      for (const YAML::Node& item : entry.second) {
        value += (value.empty() ? "" : ",") + item.as<std::string>("");
      }
    } else {
      value = entry.second.as<std::string>("");
    }
    args.push_back("--" + entry.first.as<std::string>("") + "=" + value);
  }
  return args;
}

std::string ExtraArgsPath(Component component, ConfigPlace place) {
  const bool document = place == ConfigPlace::kDocument || place == ConfigPlace::kBoth;
  return (document ? std::string(DocumentKind(component)) : V1Alpha1Section(component)) +
         ".extraArgs";
}

std::string ExtraArgsPath(Component component) {
  return ExtraArgsPath(component, ConfigPlace::kV1Alpha1);
}

absl::StatusOr<std::string> ConfigShape(const std::string& config_yaml, bool control_plane) {
  absl::StatusOr<Documents> d = Load(config_yaml);
  if (!d.ok()) return d.status();
  std::vector<std::string> documents, sections;
  for (Component c : ComponentsOf(control_plane)) {
    const ConfigPlace place = Place(*d, c);
    const bool document = place == ConfigPlace::kDocument || place == ConfigPlace::kBoth;
    (document ? documents : sections).emplace_back(ComponentName(c));
  }
  if (documents.empty()) return std::string("v1alpha1");
  if (sections.empty()) return std::string("documents");
  return fmt::format("mixed (documents: {}; v1alpha1: {})", fmt::join(documents, ", "),
                     fmt::join(sections, ", "));
}

absl::StatusOr<std::string> WithImage(const std::string& config_yaml, Component component,
                                      const std::string& image) {
  absl::StatusOr<Documents> d = Load(config_yaml);
  if (!d.ok()) return d.status();
  const size_t index = DocumentOf(*d, component);
  Document& target = d->docs[index == kNoDocument ? d->v1alpha1 : index];
  if (index == kNoDocument) {
    const FieldPath path = PathOf(component);
    target.node[path.section][path.key]["image"] = image;
  } else {
    target.node["image"] = image;
  }
  // Only that document is written anew; the others go back exactly as they came.
  YAML::Emitter emitter;
  emitter << target.node;
  const bool opened = IsDocumentStart(target.text);
  target.text = std::string(opened ? "---\n" : "") + emitter.c_str() + "\n";
  std::string out;
  for (const Document& doc : d->docs) out += doc.text;
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
