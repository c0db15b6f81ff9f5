#include "core/observed_decode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fmt/format.h"
#include "tests/core/diagnostic_strings.h"

namespace tr::core {
namespace {

using std::chrono::minutes;
using testing::ElementsAre;
using testing::ElementsAreArray;
using testing::IsEmpty;

constexpr std::string_view kObservedExample = R"(clusters:
  prod-eu-1:
    nodes:
      cp-0: {talos: 1.11.6, kubelet: 1.34.1, ready: true, etcdLeader: true}
      w-0:  {talos: 1.11.6, kubelet: 1.34.1, ready: true}
    self: w-0          # optional
  lab:
    nodes:
      n1:
        talos: v1.12.0-alpha.1-23-g1a2b3c4d
        kubelet: v1.35.0
        ready: false
        reachable: true
        schedulable: false
        etcdLeader: false
        etcdHealthy: false
        etcdMember: true
        bootId: 6f1c1b9e-1b58-4c1e-9d6a-8c4c1f6b2a11
        stage: rebooting
        lastUpgradeDuration: 7m30s
        schematic: 376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba
      n2: {reachable: false}
)";

Decoded<ObservedFleet> DecodeObserved(std::string_view text) {
  return DecodeObservedFleet("observed.yaml", text);
}

TEST(ObservedDecodeTest, DecodesTheIssueExampleAndEveryKey) {
  Decoded<ObservedFleet> decoded = DecodeObserved(kObservedExample);
  ASSERT_TRUE(decoded.ok()) << testing::PrintToString(DiagnosticStrings(decoded.diagnostics));
  const ObservedFleet& fleet = *decoded.value;
  ASSERT_EQ(fleet.clusters.size(), 2u);
  const ObservedCluster* prod = fleet.FindCluster("prod-eu-1");
  ASSERT_NE(prod, nullptr);
  EXPECT_EQ(prod->self_node, "w-0");
  ASSERT_EQ(prod->nodes.size(), 2u);
  const NodeObservation& cp = prod->nodes[0];
  EXPECT_EQ(cp.name, "cp-0");
  EXPECT_EQ(cp.talos->Tag(), "v1.11.6");
  EXPECT_EQ(cp.kubelet->ToString(), "1.34.1");
  EXPECT_TRUE(cp.etcd_leader);
  // Defaults for keys not written.
  EXPECT_TRUE(cp.reachable);
  EXPECT_TRUE(cp.schedulable);
  EXPECT_TRUE(cp.etcd_healthy);
  EXPECT_FALSE(cp.etcd_member);
  EXPECT_EQ(cp.stage, MachineStage::kRunning);
  EXPECT_FALSE(cp.last_upgrade_duration.has_value());
  EXPECT_EQ(cp.schematic, std::nullopt);
  EXPECT_FALSE(prod->nodes[1].etcd_leader);

  const ObservedCluster* lab = fleet.FindCluster("lab");
  ASSERT_NE(lab, nullptr);
  EXPECT_EQ(lab->self_node, "");
  const NodeObservation& n1 = lab->nodes[0];
  EXPECT_EQ(n1.talos->Tag(), "v1.12.0-alpha.1-23-g1a2b3c4d");
  EXPECT_FALSE(n1.ready);
  EXPECT_TRUE(n1.reachable);
  EXPECT_FALSE(n1.schedulable);
  EXPECT_FALSE(n1.etcd_healthy);
  EXPECT_TRUE(n1.etcd_member);
  EXPECT_EQ(n1.boot_id, "6f1c1b9e-1b58-4c1e-9d6a-8c4c1f6b2a11");
  EXPECT_EQ(n1.stage, MachineStage::kRebooting);
  EXPECT_EQ(n1.last_upgrade_duration, std::chrono::seconds(450));
  EXPECT_EQ(n1.schematic, "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba");
  EXPECT_FALSE(lab->nodes[1].reachable);
  EXPECT_FALSE(lab->nodes[1].talos.has_value());
  EXPECT_EQ(fleet.FindCluster("nope"), nullptr);
}

TEST(ObservedDecodeTest, EmptyClustersIsAnEmptyFleet) {
  Decoded<ObservedFleet> decoded = DecodeObserved("clusters: {}\n");
  ASSERT_TRUE(decoded.ok());
  EXPECT_THAT(decoded.value->clusters, IsEmpty());
}

struct ObservedCase {
  std::string name;
  std::string yaml;
  std::vector<std::string> diagnostics;
};

std::string ObservedAt(int line, int column, std::string_view path, std::string_view message) {
  return fmt::format("observed.yaml:{}:{}: {}: {}", line, column, path, message);
}

std::string OneNode(std::string_view body) {
  return fmt::format("clusters:\n  c:\n    nodes:\n      n: {}\n", body);
}

class ObservedRuleTest : public testing::TestWithParam<ObservedCase> {};

TEST_P(ObservedRuleTest, ReportsExactly) {
  Decoded<ObservedFleet> decoded = DecodeObserved(GetParam().yaml);
  EXPECT_FALSE(decoded.ok());
  EXPECT_THAT(DiagnosticStrings(decoded.diagnostics), ElementsAreArray(GetParam().diagnostics));
}

const ObservedCase kCases[] = {
    {"Empty", "", {"observed.yaml:1:1: file is empty"}},
    {"NoClusters",
     "nodes: {}\n",
     {ObservedAt(1, 1, "nodes", "unknown key \"nodes\""), ObservedAt(1, 1, "clusters", "is required")}},
    {"ClustersList", "clusters: [a]\n", {ObservedAt(1, 11, "clusters", "must be a mapping, not a list")}},
    {"BadClusterName",
     "clusters:\n  Prod_1: {nodes: {}}\n",
     {ObservedAt(2, 3, "clusters.Prod_1",
         "cluster name must be a DNS-1123 label: 1-63 lowercase letters, digits or '-', "
         "starting and ending with a letter or digit")}},
    {"MissingNodes",
     "clusters:\n  c: {self: a}\n",
     {ObservedAt(2, 6, "clusters.c.nodes", "is required"),
      ObservedAt(2, 13, "clusters.c.self", "\"a\" is not one of this cluster's nodes")}},
    {"BadNodeName",
     "clusters:\n  c:\n    nodes:\n      N_1: {}\n",
     {ObservedAt(4, 7, "clusters.c.nodes.N_1",
         "node name must be a DNS-1123 name: lowercase letters, digits, '-' and '.', each "
         "dot-separated part starting and ending with a letter or digit, at most 253 characters")}},
    {"NodeNull",
     "clusters:\n  c:\n    nodes:\n      n:\n",
     {ObservedAt(4, 7, "clusters.c.nodes.n", "must be a mapping, not nothing")}},
    {"UnknownNodeKey",
     OneNode("{talos: 1.11.6, kubeletVersion: 1.34.1}"),
     {ObservedAt(4, 26, "clusters.c.nodes.n.kubeletVersion",
         "unknown key \"kubeletVersion\" (did you mean \"kubelet\"?)")}},
    {"TalosTwoParts",
     OneNode("{talos: 1.11}"),
     {ObservedAt(4, 18, "clusters.c.nodes.n.talos",
         "invalid Talos version \"1.11\": want MAJOR.MINOR.PATCH")}},
    {"ReadyString",
     OneNode("{ready: \"yes\"}"),
     {ObservedAt(4, 18, "clusters.c.nodes.n.ready", "must be true or false, without quotes")}},
    {"BadStage",
     OneNode("{stage: sleeping}"),
     {ObservedAt(4, 18, "clusters.c.nodes.n.stage",
         "must be unknown, booting, installing, maintenance, running, rebooting, shutting-down, "
         "resetting or upgrading")}},
    {"BadDuration",
     OneNode("{lastUpgradeDuration: 5}"),
     {ObservedAt(4, 32, "clusters.c.nodes.n.lastUpgradeDuration",
         "invalid duration \"5\": missing unit: write s, m or h after the number, e.g. 30s")}},
    {"SchematicNotAnId",
     OneNode("{schematic: 3765679}"),
     {ObservedAt(4, 22, "clusters.c.nodes.n.schematic",
         "must be a schematic ID: 64 lowercase hex digits")}},
    {"BootIdList",
     OneNode("{bootId: [a]}"),
     {ObservedAt(4, 19, "clusters.c.nodes.n.bootId", "must be a string, not a list")}},
    {"TwoLeaders",
     "clusters:\n  c:\n    nodes:\n      a: {etcdLeader: true}\n      b: {etcdLeader: true}\n",
     {ObservedAt(5, 7, "clusters.c.nodes.b", "a is already the etcd leader; a cluster has at most one")}},
    {"SelfUnknown",
     "clusters:\n  c:\n    nodes: {a: {}}\n    self: b\n",
     {ObservedAt(4, 11, "clusters.c.self", "\"b\" is not one of this cluster's nodes")}},
    {"DuplicateNode",
     "clusters:\n  c:\n    nodes:\n      a: {}\n      a: {}\n",
     {ObservedAt(5, 7, "clusters.c.nodes.a", "duplicate key \"a\" (first at line 4)")}},
    {"Alias",
     "clusters:\n  a: &x {nodes: {}}\n  b: *x\n",
     {ObservedAt(2, 6, "clusters.a", "anchors (&x) are not allowed")}},
};

INSTANTIATE_TEST_SUITE_P(Cases, ObservedRuleTest, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<ObservedCase>& param_info) {
                           return param_info.param.name;
                         });

}  // namespace
}  // namespace tr::core
