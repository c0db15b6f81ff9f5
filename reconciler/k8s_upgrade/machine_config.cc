#include "reconciler/k8s_upgrade/machine_config.h"

#include <algorithm>
#include <string_view>
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

// `key` of the component's section of the v1alpha1 document (`cluster.apiServer.<key>`, ...).
YAML::Node SectionField(const Documents& d, Component component, const char* key) {
  const FieldPath path = PathOf(component);
  return Child(Child(Child(d.docs[d.v1alpha1].node, path.section), path.key), key);
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
  const YAML::Node image = SectionField(*d, component, "image");
  return image.IsScalar() ? image.as<std::string>() : std::string();
}

absl::StatusOr<std::vector<std::string>> ConfiguredExtraArgs(const std::string& config_yaml,
                                                             Component component) {
  absl::StatusOr<Documents> d = Load(config_yaml);
  if (!d.ok()) return d.status();
  const YAML::Node extra = SectionField(*d, component, "extraArgs");
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

std::string ExtraArgsPath(Component component) {
  const FieldPath path = PathOf(component);
  return std::string(path.section) + "." + path.key + ".extraArgs";
}

absl::StatusOr<std::string> WithImage(const std::string& config_yaml, Component component,
                                      const std::string& image) {
  absl::StatusOr<Documents> d = Load(config_yaml);
  if (!d.ok()) return d.status();
  const FieldPath path = PathOf(component);
  Document& v1alpha1 = d->docs[d->v1alpha1];
  v1alpha1.node[path.section][path.key]["image"] = image;
  // Only the v1alpha1 document is written anew; the others go back exactly as they came.
  YAML::Emitter emitter;
  emitter << v1alpha1.node;
  const bool opened = IsDocumentStart(v1alpha1.text);
  v1alpha1.text = std::string(opened ? "---\n" : "") + emitter.c_str() + "\n";
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
