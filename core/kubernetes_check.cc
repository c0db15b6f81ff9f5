#include "core/kubernetes_check.h"

#include <optional>

#include "core/names.h"
#include "core/yaml_decode.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

// "app=ceph", "tier!=test,app" (equality-based); what the Kubernetes API takes as labelSelector.
std::optional<std::string> DecodeLabelSelector(const Field& field) {
  std::optional<std::string> text = ReadString(field);
  if (!text) return std::nullopt;
  bool ok = !text->empty() && text->size() <= 1024;
  for (char c : *text) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                std::string_view("._-/=!,").find(c) != std::string_view::npos);
  }
  if (!ok) field.Error("must be an equality-based label selector such as app=ceph,tier!=test");
  return ok ? text : std::nullopt;
}

}  // namespace

bool KubernetesCheck::DecodeKeys(const MappingReader& m) {
  MappingReader w(m.Required("workloads"), {"kind", "namespace", "name", "labelSelector"});
  if (!w.ok()) return false;
  std::optional<std::string> kind = ReadEnum<std::string>(
      w.Required("kind"),
      {{"Deployment", "Deployment"}, {"StatefulSet", "StatefulSet"}, {"DaemonSet", "DaemonSet"}});
  std::optional<std::string> ns = ReadChecked(w.Required("namespace"), CheckDns1123Label);
  std::optional<std::string> name, selector;
  const Field name_field = w.Optional("name"), selector_field = w.Optional("labelSelector");
  bool ok = kind && ns;
  if (name_field.present()) {
    name = ReadChecked(name_field, CheckDns1123Subdomain);
    ok = ok && name;
  }
  if (selector_field.present()) {
    selector = DecodeLabelSelector(selector_field);
    ok = ok && selector;
  }
  if (name_field.present() && selector_field.present()) {
    selector_field.Error("set name or labelSelector, not both");
    ok = false;
  }
  if (!ok) return false;
  workload_kind = *kind;
  namespace_name = *ns;
  workload_name = name.value_or("");
  label_selector = selector.value_or("");
  return true;
}

std::string KubernetesCheck::Describe() const {
  return fmt::format("{} {} in namespace {} rolled out", workload_kind,
                     !workload_name.empty()    ? workload_name
                     : !label_selector.empty() ? "matching " + label_selector
                                               : "(all)",
                     namespace_name);
}

}  // namespace tr::core
