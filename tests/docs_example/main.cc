// Prints the drain forecast section of a pull request's plan comment, as the daemon writes it:
// a cluster seeded with a single-replica budget, a budget with maxUnavailable 0, replicas
// pinned to one node, an unmanaged pod, a pod on a local volume and one with an emptyDir,
// observed live through talos-sim (started here, on an address range of its own) and planned
// from Talos 1.13.2 to 1.13.9 by PreviewPlan.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>

#include "base/env.h"
#include "fmt/format.h"
#include "reconciler/features/plan/plan_engine.h"
#include "tests/sim/fleet.h"

namespace {

constexpr char kFleet[] = R"(
time_scale: 0.001
address_prefix: auto
clusters:
  - name: shop
    nodes:
      - {name: shop-cp, role: controlplane, talos: v1.13.2, kubernetes: 1.35.0}
      - {name: shop-w0, role: worker, talos: v1.13.2, kubernetes: 1.35.0}
      - {name: shop-w1, role: worker, talos: v1.13.2, kubernetes: 1.35.0}
      - {name: shop-w2, role: worker, talos: v1.13.2, kubernetes: 1.35.0}
    pods:
      - {name: billing-0, namespace: shop, node: shop-w0, labels: {app: billing}}
      - {name: cart-a, namespace: shop, node: shop-w0, labels: {app: cart}}
      - {name: cart-b, namespace: shop, node: shop-w1, labels: {app: cart}}
      - {name: gpu-a, namespace: shop, node: shop-w1, labels: {app: gpu}, node_selector: {kubernetes.io/hostname: shop-w1}}
      - {name: gpu-b, namespace: shop, node: shop-w1, labels: {app: gpu}, node_selector: {kubernetes.io/hostname: shop-w1}}
      - {name: debug, namespace: shop, node: shop-w1, labels: {app: debug}, owner: none}
      - {name: pg-0, namespace: shop, node: shop-w2, labels: {app: pg}, owner: StatefulSet, volumes: [{name: data, claim: data-pg-0}]}
      - {name: search-0, namespace: shop, node: shop-w2, labels: {app: search}, volumes: [{name: index, empty_dir: true}]}
    pdbs:
      - {name: billing, namespace: shop, selector: {app: billing}, min_available: 1}
      - {name: cart, namespace: shop, selector: {app: cart}, max_unavailable: 0}
      - {name: gpu, namespace: shop, selector: {app: gpu}, min_available: 1}
    persistent_volumes:
      - {name: pv-pg-0, node: shop-w2, storage_class: local, claim: shop/data-pg-0}
    storage_classes:
      - {name: local, provisioner: kubernetes.io/no-provisioner, binding_mode: WaitForFirstConsumer}
)";

std::string Profile(tr::sim::Fleet& fleet, const std::string& talos) {
  std::string text = fmt::format(
      "apiVersion: talos-reconciler.dev/v1alpha1\nkind: ClusterProfile\nmetadata: {{name: shop}}\n"
      "spec:\n  endpoints: [{}]\n  credentials: shop\n"
      "  talos: {{version: {}, image: factory.talos.dev/metal-installer/abc}}\n"
      "  kubernetes: {{version: 1.35.0}}\n  policy: {{maxParallelWorkers: 1}}\n  nodes:\n",
      *fleet.NodeAddress("shop-cp"), talos);
  for (const char* node : {"shop-cp", "shop-w0", "shop-w1", "shop-w2"}) {
    text += fmt::format("    - {{name: {}, address: {}, role: {}}}\n", node,
                        *fleet.NodeAddress(node),
                        std::string(node) == "shop-cp" ? "controlplane" : "worker");
  }
  return text;
}

// The comment's forecast: from its heading to the plan's gates.
std::string ForecastSection(const std::string& markdown) {
  const size_t begin = markdown.find("#### Drain forecast");
  const size_t end = markdown.find("<details><summary>Gates", begin);
  if (begin == std::string::npos || end == std::string::npos) return "";
  return markdown.substr(begin, end - begin);
}

}  // namespace

int main() {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("forecast-example-{}", ::getpid());
  absl::StatusOr<tr::sim::FleetSpec> spec = tr::sim::FleetSpec::Parse(kFleet);
  if (!spec.ok()) {
    std::cerr << "forecast-example: " << spec.status() << "\n";
    return 1;
  }
  absl::StatusOr<std::unique_ptr<tr::sim::Fleet>> fleet = tr::sim::Fleet::Start(*spec, dir / "sim");
  if (!fleet.ok()) {
    std::cerr << "forecast-example: " << fleet.status() << "\n";
    return 1;
  }
  const tr::reconciler::PlanPreview preview = tr::reconciler::PreviewPlan(
      {{"clusters/shop.yaml", Profile(**fleet, "1.13.9")}},
      {{"clusters/shop.yaml", Profile(**fleet, "1.13.2")}}, {dir / "sim", {}}, "",
      tr::Env::Default());
  (*fleet)->Stop();
  fs::remove_all(dir);
  const std::string section = ForecastSection(preview.markdown);
  if (section.empty()) {
    std::cerr << "forecast-example: the plan has no drain forecast:\n" << preview.markdown;
    return 1;
  }
  std::cout << section;
  return 0;
}
