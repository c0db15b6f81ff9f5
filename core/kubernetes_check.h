// Health-check type `kubernetes`: the `workloads` (one by name, or every match of a label
// selector, of a kind in a namespace) have rolled out, in the target cluster. Decoded and
// described here; one alternative of HealthCheckSpec (health_check.h); probed by
// ProbeKubernetes (reconciler/operations/gates/probes.h) through the cluster's Kubernetes API.
//
// Values; thread-compatible.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace tr::core {

class MappingReader;

struct KubernetesCheck {
  static constexpr std::string_view kType = "kubernetes";
  static constexpr std::array<std::string_view, 1> kKeys = {"workloads"};

  std::string workload_kind;   // Deployment | StatefulSet | DaemonSet
  std::string namespace_name;  // required
  std::string workload_name;   // one workload; empty: every match of label_selector
  std::string label_selector;  // equality-based ("app=ceph,tier!=test"); empty: all

  // `workloads` (kind, namespace, and name or labelSelector); false after reporting a problem.
  bool DecodeKeys(const MappingReader& m);
  std::string Describe() const;  // "Deployment web in namespace shop rolled out"
};

}  // namespace tr::core
