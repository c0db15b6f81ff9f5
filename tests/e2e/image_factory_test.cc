// Profiles that name an Image Factory schematic, against talos-sim's simulated factory: the
// installer from the factory's ID, the extensions a node then runs, and a factory that fails.
#include <string>

#include "core/schematic.h"
#include "nlohmann/json.hpp"
#include "tests/support/wait.h"
#include "tests/e2e/e2e_fixture.h"

namespace tr::e2e {
namespace {

constexpr auto kFactoryReadyTimeout = 120s;
constexpr char kIscsiSchematic[] =
    "{customization: {systemExtensions: {officialExtensions: [siderolabs/iscsi-tools]}}}";

// Cluster edge (a control plane and a worker) Ready on Talos 1.13.2 under a daemon that asks
// the simulated factory, which also builds 1.14.0; `since` is the journal's last entry then.
absl::Status StartOn1132WithTheFactory(E2eWorld& world, uint64_t& since) {
  if (absl::Status s = world.StartFleet({MakeCluster("edge", 1, 1, "1.13.2", "1.35.0")}); !s.ok()) {
    return s;
  }
  const std::string factory = world.sim().factory_url();
  if (absl::Status s = world.sim().AddFactoryRelease("v1.14.0"); !s.ok()) return s;
  world.PushProfiles({{"edge", AtTalos("1.13.2", {}, "1.35.0")}}, "initial profile");
  if (absl::Status s = world.StartDaemon([&](DaemonOptions& o) {
        o.extra_args = {"--image-factory", factory};
      });
      !s.ok()) {
    return s;
  }
  if (absl::Status s = world.WaitForReady("edge", "1.13.2", "", kFactoryReadyTimeout).status();
      !s.ok()) {
    return s;
  }
  since = LastSeq(world.Journal());
  return absl::OkStatus();
}

// Talos 1.12 to 1.14 (through the newest 1.13) with a schematic declared in Git, blocked while
// the factory answers 500 and while it hangs, then rolled out once it answers. Ready at the end
// also says each node runs the schematic: the daemon observes every node's schematic
// (ExtensionStatuses) and would reinstall a node on 1.14.0 with another one.
TEST_F(E2eTest, ASchematicProfileUpgradesThroughTheFactoryBlockedWhileItFails) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("edge", 1, 1, "1.12.0", "1.35.0")}));
  const std::string factory = world().sim().factory_url();
  ASSERT_FALSE(factory.empty());
  // A release the built-in catalog does not know: the daemon learns it from the factory.
  E2E_ASSERT_OK(world().sim().AddFactoryRelease("v1.14.0"));
  world().PushProfiles({{"edge", AtTalos("1.12.0", {}, "1.35.0")}}, "initial profile");
  E2E_ASSERT_OK(world().StartDaemon([&](DaemonOptions& o) {
    o.extra_args = {"--image-factory", factory, "--image-factory-timeout", "500ms"};
  }));
  E2E_ASSERT_OK(world().WaitForReady("edge", "1.12.0", "", kFactoryReadyTimeout).status());
  // The newest release is the factory's (the built-in catalog stops at 1.13). The daemon lists
  // the factory's releases beside its first reconcile, which may write Ready first: learning
  // them reconciles the cluster again.
  E2E_ASSERT_OK(world()
                    .WaitForStatus(
                        "edge",
                        [](const core::ClusterStatus& s) {
                          return s.phase == core::ClusterPhase::kReady &&
                                 s.talos.available == "1.14.0";
                        },
                        60s)
                    .status());
  const uint64_t since = LastSeq(world().Journal());

  // The factory answers 500: Blocked, naming it, and no node touched.
  E2E_ASSERT_OK(world().sim().SetFactoryFault("internal_error"));
  ProfileDef wanted = AtTalos("1.14.0", {}, "1.35.0");
  wanted.schematic = kIscsiSchematic;
  const std::string commit = world().PushProfiles({{"edge", wanted}}, "edge: 1.14.0, iscsi-tools");
  auto blocked = world().WaitForStatus(
      "edge",
      [&](const core::ClusterStatus& s) {
        return s.phase == core::ClusterPhase::kBlocked &&
               s.message.find(factory) != std::string::npos &&
               s.message.find("HTTP 500") != std::string::npos;
      },
      60s);
  E2E_ASSERT_OK(blocked.status());
  EXPECT_EQ(TouchedNodes(world().Journal(), "edge", since), std::vector<std::string>{});

  // It hangs: Blocked, saying it did not answer in time, still no node touched.
  E2E_ASSERT_OK(world().sim().ClearFactoryFaults());
  E2E_ASSERT_OK(world().sim().SetFactoryFault("hang"));
  auto hanging = world().WaitForStatus(
      "edge",
      [&](const core::ClusterStatus& s) {
        return s.phase == core::ClusterPhase::kBlocked &&
               s.message.find(factory) != std::string::npos &&
               s.message.find("no answer within 500ms") != std::string::npos;
      },
      60s);
  E2E_ASSERT_OK(hanging.status());
  EXPECT_EQ(TouchedNodes(world().Journal(), "edge", since), std::vector<std::string>{});

  // It answers again: the rollout runs, each node upgraded once per hop.
  E2E_ASSERT_OK(world().sim().ClearFactoryFaults());
  E2E_ASSERT_OK(world().WaitForReady("edge", "1.14.0", commit, kFactoryReadyTimeout).status());
  const auto spans = UpgradeSpans(world().Journal(), "edge", since);
  SCOPED_TRACE(Describe(spans));
  ASSERT_EQ(spans.size(), 2u);
  for (const auto& span : spans) {
    SCOPED_TRACE(span.node);
    EXPECT_EQ(span.upgrade_calls_ok, 2);
    ASSERT_EQ(span.version_changes.size(), 2u);
    EXPECT_TRUE(span.version_changes[0].starts_with("v1.12.0 -> v1.13."));
    EXPECT_TRUE(span.version_changes[1].ends_with(" -> v1.14.0"));
  }
}

// An extension added at the version the nodes run: every node is reinstalled once at that
// version with the new installer, and the status shows the old and the new schematic.
TEST_F(E2eTest, AnExtensionAddedAtTheSameVersionReinstallsEveryNodeOnce) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("edge", 1, 1, "1.14.0", "1.35.0")}));
  const std::string factory = world().sim().factory_url();
  ProfileDef vanilla = AtTalos("1.14.0", {}, "1.35.0");
  vanilla.schematic = "{}";
  world().PushProfiles({{"edge", vanilla}}, "initial profile: the vanilla schematic");
  E2E_ASSERT_OK(world().StartDaemon([&](DaemonOptions& o) {
    o.extra_args = {"--image-factory", factory};
  }));
  E2E_ASSERT_OK(world().WaitForReady("edge", "1.14.0", "", kFactoryReadyTimeout).status());
  const uint64_t since = LastSeq(world().Journal());

  ProfileDef wanted = vanilla;
  wanted.schematic = kIscsiSchematic;
  const std::string commit = world().PushProfiles({{"edge", wanted}}, "edge: add iscsi-tools");
  const std::string empty(core::kEmptySchematicId);
  auto reinstalling = world().WaitForStatus(
      "edge",
      [&](const core::ClusterStatus& s) {
        return s.phase == core::ClusterPhase::kUpgradingTalos &&
               s.talos.schematic_current == empty && !s.talos.schematic_target.empty() &&
               s.talos.schematic_target != empty;
      },
      60s);
  E2E_ASSERT_OK(reinstalling.status());
  const std::string id = reinstalling->talos.schematic_target;
  E2E_ASSERT_OK_AND_ASSIGN(const core::ClusterStatus done,
                           world().WaitForReady("edge", "1.14.0", commit, kFactoryReadyTimeout));
  EXPECT_EQ(done.talos.schematic_current, id);
  EXPECT_EQ(done.talos.schematic_target, id);
  for (const core::NodeStatus& node : done.nodes) EXPECT_EQ(node.schematic, id) << node.name;
  const auto spans = UpgradeSpans(world().Journal(), "edge", since);
  SCOPED_TRACE(Describe(spans));
  ASSERT_EQ(spans.size(), 2u);
  for (const auto& span : spans) {
    SCOPED_TRACE(span.node);
    EXPECT_EQ(span.upgrade_calls_ok, 1);
    EXPECT_EQ(span.reboot_calls_ok, 1);
    EXPECT_TRUE(span.version_changes.empty());
  }
}

// A worker with a schematic of its own (a GPU worker) beside the profile's: upgraded 1.13 to
// 1.14 with its own installer, each node once, each ending on its own schematic.
TEST_F(E2eTest, ANodesOwnSchematicIsInstalledOnThatNodeOnly) {
  uint64_t since = 0;
  E2E_ASSERT_OK(StartOn1132WithTheFactory(world(), since));

  ProfileDef wanted = AtTalos("1.14.0", {}, "1.35.0");
  wanted.schematic = kIscsiSchematic;
  wanted.node_schematics = {{"edge-w-0",
                             "{customization: {systemExtensions: {officialExtensions: "
                             "[siderolabs/nvidia-container-toolkit]}}}"}};
  const std::string commit =
      world().PushProfiles({{"edge", wanted}}, "edge: 1.14.0, iscsi-tools, a GPU worker");
  E2E_ASSERT_OK_AND_ASSIGN(const core::ClusterStatus done,
                           world().WaitForReady("edge", "1.14.0", commit, kFactoryReadyTimeout));
  const std::string id = done.talos.schematic_target;
  EXPECT_EQ(done.talos.schematic_current, id);
  ASSERT_EQ(done.nodes.size(), 2u);
  for (const core::NodeStatus& node : done.nodes) {
    SCOPED_TRACE(node.name);
    if (node.name == "edge-w-0") {
      EXPECT_NE(node.schematic, id);
      EXPECT_NE(node.schematic, std::string(core::kEmptySchematicId));
      EXPECT_EQ(node.schematic.size(), 64u);
    } else {
      EXPECT_EQ(node.schematic, id);
    }
  }
  const auto spans = UpgradeSpans(world().Journal(), "edge", since);
  SCOPED_TRACE(Describe(spans));
  ASSERT_EQ(spans.size(), 2u);
  for (const auto& span : spans) {
    SCOPED_TRACE(span.node);
    EXPECT_EQ(span.upgrade_calls_ok, 1);
    ASSERT_EQ(span.version_changes.size(), 1u);
    EXPECT_TRUE(span.version_changes[0].ends_with(" -> v1.14.0"));
  }
}

// An extension the factory does not have for the desired release: refused before any node is
// touched, naming the extension and the release.
TEST_F(E2eTest, ASchematicNamingAnExtensionMissingForTheTargetIsRefusedWithNoNodeTouched) {
  uint64_t since = 0;
  E2E_ASSERT_OK(StartOn1132WithTheFactory(world(), since));
  ProfileDef wanted = AtTalos("1.14.0", {}, "1.35.0");
  wanted.schematic = "{customization: {systemExtensions: {officialExtensions: [acme/no-such]}}}";
  world().PushProfiles({{"edge", wanted}}, "edge: 1.14.0 with an unknown extension");
  auto blocked = world().WaitForStatus(
      "edge",
      [&](const core::ClusterStatus& s) {
        return s.phase == core::ClusterPhase::kBlocked &&
               s.message.find("has no extension acme/no-such for Talos 1.14.0") !=
                   std::string::npos;
      },
      60s);
  E2E_ASSERT_OK(blocked.status());
  EXPECT_EQ(TouchedNodes(world().Journal(), "edge", since), std::vector<std::string>{});
}

// How often the simulated factory's broken list has been read.
int BrokenReads(E2eWorld& world) {
  absl::StatusOr<nlohmann::json> factory = world.sim().Factory();
  return factory.ok() ? factory->value("broken_reads", -1) : -1;
}

// The factory marks 1.14.0 broken while the rollout to it has its first node (the worker, held
// down) in flight: that node is seen through, and the cluster is then Blocked naming the
// release, with the control plane never touched. The daemon reads the broken list with the
// release list (--image-factory-ttl); the node is let up only once it has read it again.
TEST_F(E2eTest, AReleaseMarkedBrokenMidRolloutBlocksTheClusterBeforeTheNextNode) {
  ClusterDef cluster = MakeCluster("edge", 1, 1, "1.13.2", "1.35.0");
  for (auto& node : cluster.nodes) {
    if (!node.control_plane) node.faults = "[{kind: never_returns, count: 1}]";
  }
  E2E_ASSERT_OK(world().StartFleet({cluster}));
  const std::string factory = world().sim().factory_url();
  E2E_ASSERT_OK(world().sim().AddFactoryRelease("v1.14.0"));
  world().PushProfiles({{"edge", AtTalos("1.13.2", {}, "1.35.0")}}, "initial profile");
  E2E_ASSERT_OK(world().StartDaemon([&](DaemonOptions& o) {
    o.extra_args = {"--image-factory", factory, "--image-factory-ttl", "1s"};
  }));
  E2E_ASSERT_OK(world().WaitForReady("edge", "1.13.2", "", kFactoryReadyTimeout).status());
  const uint64_t since = LastSeq(world().Journal());

  ProfileDef wanted = AtTalos("1.14.0", {}, "1.35.0");
  wanted.schematic = kIscsiSchematic;
  world().PushProfiles({{"edge", wanted}}, "edge: 1.14.0, iscsi-tools");
  std::string first;
  ASSERT_TRUE(test_support::WaitUntil(
      [&] {
        for (const JournalLine& line : world().Journal()) {
          if (line.seq > since && line.cluster == "edge" && IsUpgradeCall(line)) first = line.node;
        }
        return !first.empty();
      },
      60s));

  const int reads = BrokenReads(world());
  E2E_ASSERT_OK(world().sim().MarkFactoryReleaseBroken("v1.14.0"));
  ASSERT_TRUE(test_support::WaitUntil([&] { return BrokenReads(world()) > reads + 1; }, 30s));
  E2E_ASSERT_OK(world().sim().ClearFaults(first));

  auto blocked = world().WaitForStatus(
      "edge",
      [&](const core::ClusterStatus& s) {
        return s.phase == core::ClusterPhase::kBlocked &&
               s.message.find("Talos 1.14.0 is marked broken by the Image Factory") !=
                   std::string::npos;
      },
      60s);
  E2E_ASSERT_OK(blocked.status());
  EXPECT_EQ(TouchedNodes(world().Journal(), "edge", since), std::vector<std::string>{first});
  for (const core::NodeStatus& node : blocked->nodes) {
    EXPECT_EQ(node.talos, node.name == first ? "1.14.0" : "1.13.2") << node.name;
  }
}

}  // namespace
}  // namespace tr::e2e
