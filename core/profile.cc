#include "core/profile.h"

namespace tr::core {

const char* NodeRoleName(NodeRole role) {
  return role == NodeRole::kControlPlane ? "controlplane" : "worker";
}

const char* InstallerStoreName(InstallerStore store) {
  return store == InstallerStore::kInMemory ? "inmem" : "system";
}

Policy MergePolicy(const Policy& base, const PolicyOverrides& o) {
  Policy p = base;
  if (o.max_parallel_workers) p.max_parallel_workers = *o.max_parallel_workers;
  if (o.node_timeout) p.node_timeout = *o.node_timeout;
  if (o.settle) p.settle = *o.settle;
  if (o.windows) p.windows = *o.windows;
  if (o.health_checks) p.health_checks = *o.health_checks;
  if (o.etcd_snapshot) p.etcd_snapshot = *o.etcd_snapshot;
  if (o.on_failure) p.on_failure = *o.on_failure;
  if (o.paused) p.paused = *o.paused;
  if (o.allow_downgrade) p.allow_downgrade = *o.allow_downgrade;
  if (o.upgrade_order) p.upgrade_order = *o.upgrade_order;
  if (o.gate_timeout) p.gate_timeout = *o.gate_timeout;
  if (o.drain_timeout) p.drain.timeout = *o.drain_timeout;
  if (o.drain_on_timeout) p.drain.on_timeout = *o.drain_on_timeout;
  if (o.install) p.install = *o.install;
  return p;
}

std::string ClusterProfile::InstallerImage() const {
  if (talos_image.empty()) return "";  // a schematic whose ID is not known yet
  return talos_image + ":" + talos_version.Tag();
}

bool IsControlPlane(const ClusterProfile& profile, std::string_view node) {
  for (const NodeSpec& n : profile.nodes) {
    if (n.name == node) return n.role == NodeRole::kControlPlane;
  }
  return false;
}

const std::string& DesiredSchematicId(const ClusterProfile& profile, std::string_view node) {
  for (const NodeSpec& n : profile.nodes) {
    if (n.name == node && n.schematic) return n.talos_schematic_id;
  }
  return profile.talos_schematic_id;
}

}  // namespace tr::core
