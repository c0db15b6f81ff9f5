// COSI resources of a simulated node, derived from its state: MachineStatus, Services,
// KubeletSpec, MachineConfig, the control-plane component configs and static pods. Every refresh
// diffs against the stored resources; changes get a new version and go to the watch log.
#include "fmt/format.h"
#include "google/protobuf/struct.pb.h"
#include "resource/config/config.pb.h"
#include "resource/definitions/k8s/k8s.pb.h"
#include "resource/definitions/runtime/runtime.pb.h"
#include "resource/definitions/v1alpha1/v1alpha1.pb.h"
#include "tests/sim/catalog/extension_resources.h"
#include "tests/sim/node/sim_cluster.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim {
namespace {

namespace k8s = talos::resource::definitions::k8s;
namespace rt = talos::resource::definitions::runtime;

using Desired = DesiredResource;

std::string Bool(bool b) { return b ? "true" : "false"; }

void AddMachineStatus(const SimNode& node, std::vector<Desired>& out) {
  rt::MachineStatusSpec spec;
  spec.set_stage(static_cast<talos::resource::definitions::enums::RuntimeMachineStage>(
      static_cast<int>(node.stage)));
  const bool ready = ReportedReady(node.stage, node.ready);
  spec.mutable_status()->set_ready(ready);
  std::string yaml = fmt::format(
      "stage: {}\nstatus:\n  ready: {}\n",
      [&] {
        std::string s(MachineStageName(node.stage));
        for (auto& c : s) c = static_cast<char>(std::tolower(c));
        return s;
      }(),
      Bool(ready));
  if (!node.unmet.empty()) yaml += "  unmetConditions:\n";
  for (const auto& name : node.unmet) {
    auto* c = spec.mutable_status()->add_unmet_conditions();
    c->set_name(name);
    c->set_reason("waiting");
    yaml += fmt::format("    - name: {}\n      reason: waiting\n", name);
  }
  out.push_back(
      {"runtime", "MachineStatuses.runtime.talos.dev", "machine", spec.SerializeAsString(), yaml});
}

void AddServices(const SimNode& node, std::vector<Desired>& out) {
  for (const auto& [id, rec] : node.services) {
    talos::resource::definitions::v1alpha1::ServiceSpec spec;
    spec.set_running(rec.state == "Running");
    spec.set_healthy(rec.healthy);
    spec.set_unknown(rec.unknown);
    out.push_back({"runtime", "Services.v1alpha1.talos.dev", id, spec.SerializeAsString(),
                   fmt::format("running: {}\nhealthy: {}\nunknown: {}\n", Bool(spec.running()),
                               Bool(spec.healthy()), Bool(spec.unknown()))});
  }
}

std::string ImageOf(const SimNode& node, const std::string& name) {
  auto it = node.images.find(name);
  return it == node.images.end() ? "" : it->second;
}

void AddStaticPod(const SimNode& node, const std::string& component, std::vector<Desired>& out) {
  k8s::StaticPodSpec spec;
  auto& fields = *spec.mutable_pod()->mutable_fields();
  fields["apiVersion"].set_string_value("v1");
  fields["kind"].set_string_value("Pod");
  auto& meta = *fields["metadata"].mutable_struct_value()->mutable_fields();
  meta["name"].set_string_value(component);
  meta["namespace"].set_string_value("kube-system");
  auto& annotations = *meta["annotations"].mutable_struct_value()->mutable_fields();
  annotations["talos.dev/config-version"].set_string_value(std::to_string(node.config_version));
  auto& spec_fields = *fields["spec"].mutable_struct_value()->mutable_fields();
  auto* container = spec_fields["containers"].mutable_list_value()->add_values();
  auto& cfields = *container->mutable_struct_value()->mutable_fields();
  cfields["name"].set_string_value(component);
  cfields["image"].set_string_value(ImageOf(node, component));
  out.push_back({"k8s", "StaticPods.kubernetes.talos.dev", component, spec.SerializeAsString(),
                 fmt::format("pod:\n  apiVersion: v1\n  kind: Pod\n  metadata:\n    name: {}\n"
                             "    namespace: kube-system\n    annotations:\n"
                             "      talos.dev/config-version: \"{}\"\n  spec:\n    containers:\n"
                             "      - name: {}\n        image: {}\n",
                             component, node.config_version, component, ImageOf(node, component))});
}

void AddControlPlane(const SimNode& node, std::vector<Desired>& out) {
  k8s::APIServerConfigSpec api;
  api.set_image(ImageOf(node, "kube-apiserver"));
  api.set_control_plane_endpoint(fmt::format("https://{}:6443", node.address));
  api.set_local_port(6443);
  out.push_back({"controlplane", "APIServerConfigs.kubernetes.talos.dev", "kube-apiserver",
                 api.SerializeAsString(), fmt::format("image: {}\n", api.image())});
  k8s::ControllerManagerConfigSpec cm;
  cm.set_enabled(true);
  cm.set_image(ImageOf(node, "kube-controller-manager"));
  out.push_back({"controlplane", "ControllerManagerConfigs.kubernetes.talos.dev",
                 "kube-controller-manager", cm.SerializeAsString(),
                 fmt::format("enabled: true\nimage: {}\n", cm.image())});
  k8s::SchedulerConfigSpec sched;
  sched.set_enabled(true);
  sched.set_image(ImageOf(node, "kube-scheduler"));
  out.push_back({"controlplane", "SchedulerConfigs.kubernetes.talos.dev", "kube-scheduler",
                 sched.SerializeAsString(),
                 fmt::format("enabled: true\nimage: {}\n", sched.image())});
  for (const char* c : {"kube-apiserver", "kube-controller-manager", "kube-scheduler"}) {
    AddStaticPod(node, c, out);
  }
}

// The bootstrap manifests Talos renders from the machine configuration on control planes
// (Manifests in the controlplane namespace), reduced to their workloads: the kube-proxy DaemonSet
// and the CoreDNS Deployment. The spec is the list of objects.
void AddManifest(const std::string& id, const char* api_version, const char* kind, const char* name,
                 const std::string& image, std::vector<Desired>& out) {
  k8s::ManifestSpec spec;
  auto& fields = *spec.add_items()->mutable_object()->mutable_fields();
  fields["apiVersion"].set_string_value(api_version);
  fields["kind"].set_string_value(kind);
  auto& meta = *fields["metadata"].mutable_struct_value()->mutable_fields();
  meta["name"].set_string_value(name);
  meta["namespace"].set_string_value("kube-system");
  auto* spec_fields = fields["spec"].mutable_struct_value()->mutable_fields();
  auto* template_fields = (*spec_fields)["template"].mutable_struct_value()->mutable_fields();
  auto* pod_fields = (*template_fields)["spec"].mutable_struct_value()->mutable_fields();
  auto& container = *(*pod_fields)["containers"]
                         .mutable_list_value()
                         ->add_values()
                         ->mutable_struct_value()
                         ->mutable_fields();
  container["name"].set_string_value(name);
  container["image"].set_string_value(image);
  out.push_back({"controlplane", "Manifests.kubernetes.talos.dev", id, spec.SerializeAsString(),
                 fmt::format("- apiVersion: {}\n  kind: {}\n  metadata:\n    name: {}\n"
                             "    namespace: kube-system\n  spec:\n    template:\n      spec:\n"
                             "        containers:\n          - name: {}\n            image: {}\n",
                             api_version, kind, name, name, image)});
}

// Whether the configuration's v1alpha1 document sets cluster.proxy.disabled: Talos then renders
// no "10-kube-proxy" manifest (talos v1.14.0-rc.1 internal/app/machined/pkg/controllers/k8s/
// control_plane.go ProxyEnabled, manifest.go).
bool ProxyDisabled(const std::string& machine_config) {
  try {
    for (const YAML::Node& doc : YAML::LoadAll(machine_config)) {
      if (doc["version"].as<std::string>("") != "v1alpha1") continue;
      return doc["cluster"]["proxy"]["disabled"].as<bool>(false);
    }
  } catch (const YAML::Exception&) {
  }
  return false;
}

std::vector<Desired> DesiredResources(const SimNode& node, const RegistryCatalog& registry) {
  std::vector<Desired> out = ExtensionResources(
      registry.InstalledExtensions(node.image, node.tag), TalosMinor(node));
  AddMachineStatus(node, out);
  AddServices(node, out);
  k8s::KubeletSpecSpec kubelet;
  kubelet.set_image(ImageOf(node, "kubelet"));
  kubelet.add_args("--hostname-override=" + node.spec.name);
  kubelet.set_expected_nodename(node.spec.name);
  out.push_back({"k8s", "KubeletSpecs.kubernetes.talos.dev", "kubelet", kubelet.SerializeAsString(),
                 fmt::format("image: {}\nargs:\n  - --hostname-override={}\nexpectedNodename: {}\n",
                             kubelet.image(), node.spec.name, node.spec.name)});
  resource::config::MachineConfigSpec config;
  config.set_yaml_marshalled(node.machine_config);
  out.push_back({"config", "MachineConfigs.config.talos.dev", "v1alpha1",
                 config.SerializeAsString(), node.machine_config});
  if (node.is_control_plane()) {
    AddControlPlane(node, out);
    if (!ProxyDisabled(node.machine_config)) {
      AddManifest("10-kube-proxy", "apps/v1", "DaemonSet", "kube-proxy",
                  ImageOf(node, "kube-proxy"), out);
    }
    AddManifest("11-core-dns", "apps/v1", "Deployment", "coredns", kDefaultCoreDnsImage, out);
  }
  return out;
}

}  // namespace

void SimCluster::RefreshResourcesLocked(SimNode& node) {
  if (!node.up) return;
  const WallTime now = scheduler_->WallNow();
  std::map<std::string, Desired> desired;
  for (auto& d : DesiredResources(node, *registry_)) {
    std::string key = fmt::format("{}/{}/{}", d.ns, d.type, d.id);
    desired.emplace(std::move(key), std::move(d));
  }
  for (auto it = node.resources.begin(); it != node.resources.end();) {
    if (desired.contains(it->first)) {
      ++it;
      continue;
    }
    node.cosi_log.push_back({.seq = node.next_cosi_seq++,
                             .type = CosiChange::kDestroyed,
                             .resource = it->second,
                             .old = std::nullopt});
    it = node.resources.erase(it);
  }
  for (auto& [key, d] : desired) {
    auto it = node.resources.find(key);
    if (it == node.resources.end()) {
      CosiResource r{.ns = d.ns,
                     .type = d.type,
                     .id = d.id,
                     .version = 1,
                     .proto_spec = d.proto,
                     .yaml_spec = d.yaml,
                     .created = now,
                     .updated = now};
      node.resources.emplace(key, r);
      node.cosi_log.push_back({.seq = node.next_cosi_seq++,
                               .type = CosiChange::kCreated,
                               .resource = r,
                               .old = std::nullopt});
    } else if (it->second.proto_spec != d.proto || it->second.yaml_spec != d.yaml) {
      CosiResource old = it->second;
      it->second.proto_spec = d.proto;
      it->second.yaml_spec = d.yaml;
      ++it->second.version;
      it->second.updated = now;
      node.cosi_log.push_back({.seq = node.next_cosi_seq++,
                               .type = CosiChange::kUpdated,
                               .resource = it->second,
                               .old = old});
    }
  }
  while (node.cosi_log.size() > 4000) node.cosi_log.pop_front();
  NotifyLocked();
}

}  // namespace tr::sim
