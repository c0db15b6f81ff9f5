#include "tests/sim/api/kube_tables.h"

#include <ctime>
#include <map>

#include "core/text.h"
#include "fmt/format.h"

namespace tr::sim {
namespace {

using nlohmann::json;

json Resource(const std::string& name, const std::string& kind, bool namespaced,
              std::vector<std::string> verbs, const std::string& group = "",
              const std::string& version = "") {
  json r = {{"name", name},
            {"singularName", ""},
            {"namespaced", namespaced},
            {"kind", kind},
            {"verbs", verbs}};
  // The short names kubectl resolves through discovery ("kubectl get pdb").
  static const std::map<std::string, std::string> kShortNames = {
      {"pods", "po"},         {"nodes", "no"},         {"persistentvolumes", "pv"},
      {"persistentvolumeclaims", "pvc"}, {"poddisruptionbudgets", "pdb"},
      {"replicasets", "rs"},  {"statefulsets", "sts"}, {"daemonsets", "ds"},
      {"storageclasses", "sc"}};
  if (auto it = kShortNames.find(name); it != kShortNames.end()) {
    r["shortNames"] = json::array({it->second});
  }
  if (!group.empty()) {
    r["group"] = group;
    r["version"] = version;
  }
  return r;
}

// "5s", "12m", "3h", "30d" as kubectl prints ages.
std::string Age(const std::string& created, WallTime now) {
  std::tm tm{};
  if (strptime(created.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) return "<unknown>";
  const auto then = std::chrono::system_clock::from_time_t(timegm(&tm));
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - then).count();
  if (secs < 120) return fmt::format("{}s", std::max<int64_t>(secs, 0));
  if (secs < 3 * 3600) return fmt::format("{}m", secs / 60);
  if (secs < 2 * 86400) return fmt::format("{}h", secs / 3600);
  return fmt::format("{}d", secs / 86400);
}

json Column(const std::string& name, const std::string& type, const std::string& format = "") {
  return {
      {"name", name}, {"type", type}, {"format", format}, {"description", name}, {"priority", 0}};
}

json Row(json cells, const json& obj) {
  json meta = obj["metadata"];
  return {
      {"cells", std::move(cells)},
      {"object",
       {{"kind", "PartialObjectMetadata"}, {"apiVersion", "meta.k8s.io/v1"}, {"metadata", meta}}}};
}

json Table(json columns, json rows, uint64_t rv) {
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", {{"resourceVersion", std::to_string(rv)}}},
          {"columnDefinitions", std::move(columns)},
          {"rows", std::move(rows)}};
}

}  // namespace

json ApiVersions() {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs",
           json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", "127.0.0.1:6443"}}})}};
}

json ApiGroups() {
  auto group = [](const std::string& name) {
    json v = {{"groupVersion", name + "/v1"}, {"version", "v1"}};
    return json{{"name", name}, {"versions", json::array({v})}, {"preferredVersion", v}};
  };
  return {{"kind", "APIGroupList"},
          {"apiVersion", "v1"},
          {"groups", json::array({group("apps"), group("coordination.k8s.io"), group("policy"),
                                   group("storage.k8s.io")})}};
}

json CoreResources() {
  return {{"kind", "APIResourceList"},
          {"groupVersion", "v1"},
          {"resources",
           json::array({Resource("nodes", "Node", false, {"get", "list", "patch"}),
                        Resource("pods", "Pod", true, {"get", "list", "delete"}),
                        Resource("pods/eviction", "Eviction", true, {"create"}, "policy", "v1"),
                        Resource("persistentvolumes", "PersistentVolume", false, {"list"}),
                        Resource("persistentvolumeclaims", "PersistentVolumeClaim", true,
                                 {"list"})})}};
}

json GroupResources(const std::string& group) {
  json resources =
      group == "policy" ? json::array({Resource("poddisruptionbudgets", "PodDisruptionBudget", true,
                                                {"get", "list"})})
      : group == "apps"
          ? json::array({Resource("daemonsets", "DaemonSet", true, {"get"}),
                         Resource("replicasets", "ReplicaSet", true, {"get", "list"}),
                         Resource("statefulsets", "StatefulSet", true, {"get", "list"})})
      : group == "storage.k8s.io"
          ? json::array({Resource("storageclasses", "StorageClass", false, {"list"})})
                        : json::array({Resource("leases", "Lease", true,
                                                {"create", "delete", "get", "list", "update"})});
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group + "/v1"},
          {"resources", resources}};
}

json NodeTable(const json& nodes, WallTime now, uint64_t rv) {
  json rows = json::array();
  for (const auto& n : nodes) {
    std::string status = n["status"]["conditions"][0]["status"] == "True" ? "Ready" : "NotReady";
    if (n["spec"].value("unschedulable", false)) status += ",SchedulingDisabled";
    const bool cp = n["metadata"]["labels"].contains("node-role.kubernetes.io/control-plane");
    rows.push_back(Row(
        {n["metadata"]["name"], status, cp ? "control-plane" : "<none>",
         Age(n["metadata"]["creationTimestamp"], now), n["status"]["nodeInfo"]["kubeletVersion"]},
        n));
  }
  return Table(json::array({Column("Name", "string", "name"), Column("Status", "string"),
                            Column("Roles", "string"), Column("Age", "string"),
                            Column("Version", "string")}),
               std::move(rows), rv);
}

json PodTable(const json& pods, WallTime now, uint64_t rv) {
  json rows = json::array();
  for (const auto& p : pods) {
    const bool ready = p["status"]["conditions"][0]["status"] == "True";
    rows.push_back(Row({p["metadata"]["name"], ready ? "1/1" : "0/1", p["status"]["phase"], 0,
                        Age(p["metadata"]["creationTimestamp"], now)},
                       p));
  }
  return Table(json::array({Column("Name", "string", "name"), Column("Ready", "string"),
                            Column("Status", "string"), Column("Restarts", "integer"),
                            Column("Age", "string")}),
               std::move(rows), rv);
}

// labelSelector "a=b,c!=d,e" and fieldSelector "spec.nodeName=x" on an object's JSON.
bool MatchesSelectors(const json& obj, const std::string& label_selector,
                      const std::string& field_selector) {
  const json labels = obj["metadata"].value("labels", json::object());
  for (auto term : core::Split(label_selector, ',')) {
    if (term.empty()) continue;
    const std::string t(term);
    auto ne = t.find("!="), eq = t.find('=');
    if (ne != std::string::npos) {
      const std::string k = t.substr(0, ne);
      if (labels.contains(k) && labels[k] == t.substr(ne + 2)) return false;
    } else if (eq != std::string::npos) {
      const std::string k = t.substr(0, eq);
      const std::string v = t.substr(t[eq + 1] == '=' ? eq + 2 : eq + 1);
      if (!labels.contains(k) || labels[k] != v) return false;
    } else if (!labels.contains(t)) {
      return false;
    }
  }
  for (auto term : core::Split(field_selector, ',')) {
    const std::string t(term);
    auto eq = t.find('=');
    if (eq == std::string::npos) continue;
    const std::string field = t.substr(0, eq);
    const std::string value = t.substr(t[eq + 1] == '=' ? eq + 2 : eq + 1);
    std::string actual;
    if (field == "spec.nodeName") actual = obj["spec"].value("nodeName", "");
    if (field == "metadata.name") actual = obj["metadata"].value("name", "");
    if (field == "metadata.namespace") actual = obj["metadata"].value("namespace", "");
    if (actual != value) return false;
  }
  return true;
}

}  // namespace tr::sim
