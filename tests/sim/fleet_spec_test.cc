#include "tests/sim/catalog/fleet_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fmt/format.h"

namespace tr::sim {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSpecFleet = R"(
time_scale: 0.01
address_prefix: 127.0.42
timings:
  image_pull: 2s
  install: 1500ms
  reboot: 1m
clusters:
  - name: prod
    kube_api_port: 7443
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: cp-2, role: controlplane, talos: 1.11.6, kubernetes: v1.34.1, address: 127.0.42.9}
      - name: w-1
        role: worker
        talos: v1.13.0
        kubernetes: 1.34.1
        platform: aws
        faults:
          - {kind: boot_failure, count: 1}
          - {kind: slow_reboot, delay: 3s}
          - {kind: bad_installer_image, image: "v1.14"}
    pods:
      - {name: web-1, node: w-1, labels: {app: web}}
    pdbs:
      - {name: web, selector: {app: web}, min_available: 1}
)";

TEST(FleetSpecTest, ParsesEveryField) {
  auto spec = FleetSpec::Parse(kSpecFleet);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_DOUBLE_EQ(spec->time_scale, 0.01);
  EXPECT_EQ(spec->address_prefix, "127.0.42");
  EXPECT_EQ(spec->timings.image_pull, std::chrono::seconds(2));
  EXPECT_EQ(spec->timings.install, std::chrono::milliseconds(1500));
  EXPECT_EQ(spec->timings.reboot, std::chrono::minutes(1));
  EXPECT_EQ(spec->timings.boot, Timings{}.boot);  // default kept
  ASSERT_EQ(spec->clusters.size(), 1u);
  const ClusterSpec& c = spec->clusters[0];
  EXPECT_EQ(c.kube_api_port, 7443);
  ASSERT_EQ(c.nodes.size(), 3u);
  EXPECT_EQ(c.nodes[0].role, NodeRole::kControlPlane);
  EXPECT_EQ(c.nodes[1].talos_version, "v1.11.6");
  EXPECT_EQ(c.nodes[1].kubernetes_version, "1.34.1");
  EXPECT_EQ(c.nodes[1].address, "127.0.42.9");
  EXPECT_EQ(c.nodes[2].platform, "aws");
  ASSERT_EQ(c.nodes[2].faults.size(), 3u);
  EXPECT_EQ(c.nodes[2].faults[0].kind, FaultKind::kBootFailure);
  EXPECT_EQ(c.nodes[2].faults[0].count, 1);
  EXPECT_EQ(c.nodes[2].faults[1].delay, std::chrono::seconds(3));
  EXPECT_EQ(c.nodes[2].faults[2].image, "v1.14");
  ASSERT_EQ(c.pods.size(), 1u);
  EXPECT_EQ(c.pods[0].owner, PodOwner::kReplicaSet);
  ASSERT_EQ(c.pdbs.size(), 1u);
  EXPECT_EQ(c.pdbs[0].min_available->value, 1);
  EXPECT_EQ(spec->FindNode("w-1")->name, "w-1");
  EXPECT_EQ(spec->FindNode("nope"), nullptr);
}

TEST(FleetSpecTest, RejectsInvalidFleets) {
  struct Case {
    const char* yaml;
    const char* message;
  };
  const Case cases[] = {
      {"clusters: []", "at least one cluster"},
      {"clusters: [{name: a, nodes: [{name: w, role: worker, talos: v1.11.0, kubernetes: "
       "1.34.0}]}]",
       "at least one control plane"},
      {"clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: 1.11, kubernetes: "
       "1.34.0}]}]",
       "talos"},
      {"clusters: [{name: a, nodes: [{name: c, role: boss, talos: v1.11.0, kubernetes: "
       "1.34.0}]}]",
       "role must be"},
      {"clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.11.0, kubernetes: "
       "1.34.0, address: 10.0.0.1}]}]",
       "not in 127.0.0.0/8"},
      {"clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.11.0, kubernetes: "
       "1.34.0}, {name: c, role: worker, talos: v1.11.0, kubernetes: 1.34.0}]}]",
       "unique"},
      {"clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.11.0, kubernetes: "
       "1.34.0, faults: [{kind: meteor}]}]}]",
       "unknown fault kind"},
      {"timings: {reboot: 5h}\nclusters: []", "bad duration unit"},
      {"address_prefix: 10.1.2\nclusters: [{name: a, nodes: [{name: c, role: controlplane, "
       "talos: v1.11.0, kubernetes: 1.34.0}]}]",
       "address_prefix"},
      {"clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.11.0, kubernetes: "
       "1.34.0}], pdbs: [{name: p, selector: {a: b}}]}]",
       "exactly one of"},
      {"clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.11.0, kubernetes: "
       "1.34.0}], pods: [{name: p, node: ghost}]}]",
       "name of a node"},
      {"clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.13.9, kubernetes: "
       "1.34.0, config: partly_migrated}]}]",
       "config partly_migrated needs Talos 1.14 or later"},
      {"clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.14.0, kubernetes: "
       "1.34.0, config: yaml}]}]",
       "config must be generated, v1alpha1, migrated or partly_migrated"},
      {"clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.11.0, kubernetes: "
       "1.34.0}], pods: [{name: p, node: c, owner: Deployment}]}]",
       "owner must be ReplicaSet, StatefulSet, DaemonSet or none"},
      {"clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.11.0, kubernetes: "
       "1.34.0}], pods: [{name: p, node: c, volumes: [{name: v, claim: nope}]}]}]",
       "claim nope is not the claim of a persistent_volumes entry"},
      {"clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.11.0, kubernetes: "
       "1.34.0}], pods: [{name: p, node: c, volumes: [{name: v, empty_dir: true, host_path: /x}]}]}]",
       "exactly one of empty_dir, host_path, claim"},
      {"clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.11.0, kubernetes: "
       "1.34.0}], pdbs: [{name: p, selector: {a: b}, max_unavailable: half}]}]",
       "an int or a percentage"},
      {"clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.11.0, kubernetes: "
       "1.34.0}], deny_reads: [secrets]}]",
       "\"secrets\" is not one of pods"},
      {"clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.11.0, kubernetes: "
       "1.34.0}], persistent_volumes: [{name: v, node: ghost, claim: default/c}]}]",
       "a persistent volume needs a name"},
      {"clusters: [ {name: a", "fleet file"},
      {"- just a list", "mapping"},
  };
  for (const Case& c : cases) {
    auto spec = FleetSpec::Parse(c.yaml);
    ASSERT_FALSE(spec.ok()) << c.yaml;
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << c.yaml;
    EXPECT_THAT(std::string(std::string(spec.status().message())), HasSubstr(c.message)) << c.yaml;
  }
}

TEST(FleetSpecTest, ParsesWhatADisruptionForecastReads) {
  auto spec = FleetSpec::Parse(R"(
clusters:
  - name: a
    deny_reads: true
    nodes:
      - {name: c, role: controlplane, talos: v1.11.0, kubernetes: 1.34.0, labels: {zone: x}}
    persistent_volumes: [{name: v, node: c, storage_class: local, claim: data/db}]
    storage_classes: [{name: local, binding_mode: WaitForFirstConsumer}]
    pods:
      - {name: web-7f9c-abcde, node: c}
      - {name: db-0, namespace: data, node: c, owner: StatefulSet, owner_name: db, ready: false,
         volumes: [{name: d, claim: db}], spread: {labels: {app: db}}}
      - {name: solo, node: c, replicated: false}
    pdbs: [{name: p, selector: {a: b}, min_available: "50%"}]
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const ClusterSpec& c = spec->clusters[0];
  EXPECT_EQ(c.nodes[0].labels, (KubeLabels{{"zone", "x"}}));
  EXPECT_EQ(c.pods[0].owner, PodOwner::kReplicaSet);
  EXPECT_EQ(c.pods[0].owner_name, "web-7f9c");
  EXPECT_EQ(c.pods[1].owner, PodOwner::kStatefulSet);
  EXPECT_EQ(c.pods[1].owner_name, "db");
  EXPECT_FALSE(c.pods[1].ready);
  ASSERT_TRUE(c.pods[1].spread.has_value());
  EXPECT_EQ(c.pods[1].spread->max_skew, 1);
  EXPECT_EQ(c.pods[2].owner, PodOwner::kNone);
  EXPECT_EQ(c.pods[2].owner_name, "solo");
  EXPECT_EQ(c.pdbs[0].min_available->value, 50);
  EXPECT_TRUE(c.pdbs[0].min_available->percent);
  EXPECT_EQ(c.persistent_volumes[0].claim_namespace, "data");
  EXPECT_EQ(c.persistent_volumes[0].claim_name, "db");
  EXPECT_TRUE(c.storage_classes[0].wait_for_first_consumer);
  EXPECT_EQ(c.deny_reads.size(), std::size(kDeniableResources));
}

TEST(FleetSpecTest, ParsesTheConfigShape) {
  auto spec = FleetSpec::Parse(
      "clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.14.0, kubernetes: "
      "1.36.3, config: migrated}, {name: w, talos: v1.13.9, kubernetes: 1.36.3}]}]");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->clusters[0].nodes[0].config, ConfigShape::kMigrated);
  EXPECT_EQ(spec->clusters[0].nodes[1].config, ConfigShape::kGenerated);
  for (ConfigShape s : {ConfigShape::kGenerated, ConfigShape::kV1Alpha1, ConfigShape::kMigrated,
                        ConfigShape::kPartlyMigrated}) {
    EXPECT_EQ(ParseConfigShape(ConfigShapeName(s)).value(), s);
  }
}

TEST(FleetSpecTest, ParsesTheFactorySection) {
  auto spec = FleetSpec::Parse(R"(
factory:
  versions: [v1.13.9, 1.14.0]
  extensions:
    - {name: siderolabs/iscsi-tools}
    - {name: siderolabs/drbd, versions: [1.14.0]}
clusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.14.0, kubernetes: 1.34.0}]}]
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->factory.versions, (std::vector<std::string>{"v1.13.9", "v1.14.0"}));
  ASSERT_EQ(spec->factory.extensions.size(), 2u);
  EXPECT_EQ(spec->factory.extensions[0].name, "siderolabs/iscsi-tools");
  EXPECT_TRUE(spec->factory.extensions[0].versions.empty());
  EXPECT_EQ(spec->factory.extensions[1].versions, std::vector<std::string>{"v1.14.0"});
  const char* node =
      "\nclusters: [{name: a, nodes: [{name: c, role: controlplane, talos: v1.14.0, "
      "kubernetes: 1.34.0}]}]";
  for (const char* bad : {"factory: {versions: [latest]}", "factory: {extensions: [{name: x}]}",
                          "factory: [v1.14.0]"}) {
    auto refused = FleetSpec::Parse(std::string(bad) + node);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(refused.status().message()), ::testing::HasSubstr("factory")) << bad;
  }
}

TEST(FleetSpecTest, LoadReportsMissingFile) {
  auto spec = FleetSpec::Load("/nonexistent/fleet.yaml");
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kNotFound);
}

TEST(FleetSpecTest, ImageVerificationRulesFrom113) {
  auto spec = FleetSpec::Parse(R"(
clusters:
  - name: prod
    nodes:
      - name: cp-1
        role: controlplane
        talos: v1.13.0
        kubernetes: 1.34.1
        image_verification: [{image: "factory.talos.dev/*", deny: true}, {image: "*", skip: true}]
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const auto& rules = spec->clusters[0].nodes[0].image_verification;
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].image, "factory.talos.dev/*");
  EXPECT_TRUE(rules[0].deny);
  EXPECT_TRUE(rules[1].skip);
  for (const char* bad : {"talos: v1.12.6\n        image_verification: [{image: x/*, deny: true}]",
                          "talos: v1.13.0\n        image_verification: [{image: x/*}]",
                          "talos: v1.13.0\n        image_verification: [{deny: true}]"}) {
    auto refused = FleetSpec::Parse(fmt::format(R"(
clusters:
  - name: prod
    nodes:
      - name: cp-1
        role: controlplane
        kubernetes: 1.34.1
        {}
)",
                                                bad));
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(FleetSpecTest, PowerCycleTakesADelay) {
  auto spec = FleetSpec::Parse(R"(
clusters: [{name: prod, nodes: [{name: cp-1, role: controlplane, talos: v1.13.2,
  kubernetes: 1.34.1, faults: [{kind: power_cycle, delay: 90s, count: 2}]}]}]
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const Fault& cut = spec->clusters[0].nodes[0].faults[0];
  EXPECT_EQ(cut.kind, FaultKind::kPowerCycle);
  EXPECT_EQ(cut.delay, std::chrono::seconds(90));
  EXPECT_EQ(cut.count, 2);
  EXPECT_EQ(FaultKindName(FaultKind::kPowerCycle), "power_cycle");
}

TEST(FleetSpecTest, FaultKindNamesRoundTrip) {
  for (auto kind :
       {FaultKind::kBadInstallerImage, FaultKind::kBootFailure, FaultKind::kNeverReturns,
        FaultKind::kSlowReboot, FaultKind::kEtcdUnhealthy, FaultKind::kUpgradeLockHeld,
        FaultKind::kApiUnreachable, FaultKind::kImagePullFailure, FaultKind::kStaticPodNotReady,
        FaultKind::kKubeletNotReturning, FaultKind::kRemovedApiInUse, FaultKind::kRebootAfterPull,
        FaultKind::kEphemeralWiped, FaultKind::kNeverReady, FaultKind::kPowerCycle}) {
    auto parsed = ParseFaultKind(FaultKindName(kind));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, kind);
  }
}

}  // namespace
}  // namespace tr::sim
