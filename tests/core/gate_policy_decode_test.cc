// policy.gateTimeout and a health check's caFile (policy_decode.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/policy_decode.h"
#include "tests/core/diagnostic_strings.h"

namespace tr::core {
namespace {

using testing::ElementsAre;
using testing::IsEmpty;

struct DecodedPolicy {
  PolicyOverrides policy;
  std::vector<std::string> diagnostics;
};

DecodedPolicy DecodePolicyOf(const std::string& yaml) {
  ParsedYaml parsed = ParseStrictYaml("p.yaml", yaml);
  DecodeContext ctx("p.yaml");
  MappingReader root(RootField(ctx, *parsed.root), {"policy"});
  PolicyOverrides policy = DecodePolicy(root.Required("policy"), {});
  return {policy, DiagnosticStrings(ctx.TakeDiagnostics())};
}

TEST(GatePolicyDecodeTest, ReadsGateTimeoutAndCaFile) {
  DecodedPolicy d = DecodePolicyOf(R"(policy:
  gateTimeout: 45s
  healthChecks:
    - {name: api, type: http, url: "https://api.internal/healthz", caFile: /etc/ca/ca.pem}
)");
  EXPECT_THAT(d.diagnostics, IsEmpty());
  EXPECT_EQ(d.policy.gate_timeout, std::chrono::seconds(45));
  ASSERT_TRUE(d.policy.health_checks.has_value());
  EXPECT_EQ(std::get<HttpCheck>((*d.policy.health_checks)[0].spec).endpoint.ca_file,
            "/etc/ca/ca.pem");
  EXPECT_EQ(MergePolicy(Policy{}, {}).gate_timeout, std::chrono::minutes(30));  // default
}

TEST(GatePolicyDecodeTest, RefusesBadValuesWithFileAndLine) {
  DecodedPolicy d = DecodePolicyOf(R"(policy:
  gateTimeout: 0s
  healthChecks:
    - {name: api, type: http, url: "https://api/", caFile: ca.pem}
    - {name: p, type: prometheus, url: "http://p:9090", query: up, expectStatus: 200}
)");
  EXPECT_THAT(d.diagnostics,
              ElementsAre("p.yaml:2:16: policy.gateTimeout: must be longer than zero",
                          "p.yaml:4:60: policy.healthChecks[0].caFile: must be an absolute "
                          "file path",
                          "p.yaml:5:82: policy.healthChecks[1].expectStatus: only applies to "
                          "type http"));
}

TEST(GatePolicyDecodeTest, ReadsKubernetesChecks) {
  DecodedPolicy d = DecodePolicyOf(R"(policy:
  healthChecks:
    - name: daemonsets
      type: kubernetes
      workloads: {kind: DaemonSet, namespace: kube-system}
    - name: ceph
      type: kubernetes
      workloads: {kind: Deployment, namespace: rook-ceph, labelSelector: "app=rook-ceph-mgr"}
      timeout: 5s
)");
  EXPECT_THAT(d.diagnostics, IsEmpty());
  ASSERT_TRUE(d.policy.health_checks.has_value());
  ASSERT_TRUE(std::holds_alternative<KubernetesCheck>((*d.policy.health_checks)[0].spec));
  const auto& all = std::get<KubernetesCheck>((*d.policy.health_checks)[0].spec);
  EXPECT_EQ(all.workload_kind, "DaemonSet");
  EXPECT_EQ(all.namespace_name, "kube-system");
  EXPECT_EQ(all.workload_name, "");
  EXPECT_EQ(std::get<KubernetesCheck>((*d.policy.health_checks)[1].spec).label_selector,
            "app=rook-ceph-mgr");
}

TEST(GatePolicyDecodeTest, RefusesBadKubernetesChecks) {
  DecodedPolicy d = DecodePolicyOf(R"(policy:
  healthChecks:
    - {name: a, type: kubernetes, url: "http://x", workloads: {kind: Pod, namespace: x}}
    - {name: b, type: kubernetes, workloads: {kind: DaemonSet, namespace: x, name: y, labelSelector: z}}
    - {name: c, type: kubernetes, workloads: {kind: Deployment, namespace: x, labelSelector: "a b"}}
    - {name: d, type: kubernetes}
    - {name: e, type: http, url: "http://x", workloads: {kind: Deployment, namespace: x}}
)");
  EXPECT_THAT(
      d.diagnostics,
      ElementsAre("p.yaml:3:40: policy.healthChecks[0].url: does not apply to type kubernetes",
                  "p.yaml:3:70: policy.healthChecks[0].workloads.kind: must be Deployment, "
                  "StatefulSet or DaemonSet",
                  "p.yaml:4:102: policy.healthChecks[1].workloads.labelSelector: set name or "
                  "labelSelector, not both",
                  "p.yaml:5:94: policy.healthChecks[2].workloads.labelSelector: must be an "
                  "equality-based label selector such as app=ceph,tier!=test",
                  "p.yaml:6:7: policy.healthChecks[3].workloads: is required",
                  "p.yaml:7:57: policy.healthChecks[4].workloads: only applies to type "
                  "kubernetes"));
}

}  // namespace
}  // namespace tr::core
