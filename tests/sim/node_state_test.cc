// The node state machine driven by a simulated clock: sequences, events, stages, A/B slots,
// etcd checks and faults, without any network.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "fmt/format.h"
#include "machine/machine.pb.h"
#include "tests/sim/node/sim_cluster.h"

namespace tr::sim {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kImage = "ghcr.io/siderolabs/installer:v1.12.4";

NodeSpec Node(std::string name, NodeRole role, std::string talos = "v1.11.6") {
  NodeSpec n;
  n.name = std::move(name);
  n.role = role;
  n.talos_version = std::move(talos);
  n.kubernetes_version = "1.34.1";
  return n;
}

class NodeStateTest : public ::testing::Test {
 protected:
  void Start(std::vector<NodeSpec> nodes) {
    ClusterSpec spec;
    spec.name = "prod";
    spec.nodes = std::move(nodes);
    cluster_ = std::make_unique<SimCluster>(spec, timings_, 1.0, clock_, &journal_);
    std::vector<std::string> addresses;
    for (size_t i = 0; i < spec.nodes.size(); ++i) {
      addresses.push_back("127.0.99." + std::to_string(i + 1));
    }
    cluster_->Boot(addresses);
  }
  void StartHa(std::string talos = "v1.11.6") {
    Start({Node("cp-1", NodeRole::kControlPlane, talos),
           Node("cp-2", NodeRole::kControlPlane, talos),
           Node("cp-3", NodeRole::kControlPlane, talos), Node("w-1", NodeRole::kWorker, talos)});
  }
  SimNode& N(size_t i) { return *cluster_->nodes()[i]; }
  NodeSnapshot Snap(size_t i) {
    std::lock_guard lock(cluster_->mu());
    return cluster_->SnapshotLocked(N(i));
  }
  // Payload names of the node's buffered events ("SequenceEvent", ...).
  std::vector<std::string> EventNames(size_t i) {
    std::lock_guard lock(cluster_->mu());
    std::vector<std::string> names;
    for (const auto& ev : N(i).events) names.push_back(ev.type_url.substr(22));
    return names;
  }
  std::vector<machine::MachineStatusEvent> Stages(size_t i) {
    std::lock_guard lock(cluster_->mu());
    std::vector<machine::MachineStatusEvent> out;
    for (const auto& ev : N(i).events) {
      if (ev.type_url != "talos/runtime/machine.MachineStatusEvent") continue;
      out.emplace_back().ParseFromString(ev.value);
    }
    return out;
  }
  std::vector<std::string> Phases(size_t i) {
    std::lock_guard lock(cluster_->mu());
    std::vector<std::string> out;
    for (const auto& ev : N(i).events) {
      machine::PhaseEvent pe;
      if (ev.type_url == "talos/runtime/machine.PhaseEvent" && pe.ParseFromString(ev.value) &&
          pe.action() == machine::PhaseEvent::START) {
        out.push_back(pe.phase());
      }
    }
    return out;
  }
  // Names of the TaskEvents that started, in order.
  std::vector<std::string> Tasks(size_t i) {
    std::lock_guard lock(cluster_->mu());
    std::vector<std::string> out;
    for (const auto& ev : N(i).events) {
      machine::TaskEvent te;
      if (ev.type_url == "talos/runtime/machine.TaskEvent" && te.ParseFromString(ev.value) &&
          te.action() == machine::TaskEvent::START) {
        out.push_back(te.task());
      }
    }
    return out;
  }
  // The reboot command of the node's last RestartEvent, 0 when there is none.
  int64_t RestartCmd(size_t i) {
    std::lock_guard lock(cluster_->mu());
    int64_t cmd = 0;
    for (const auto& ev : N(i).events) {
      machine::RestartEvent re;
      if (ev.type_url == "talos/runtime/machine.RestartEvent" && re.ParseFromString(ev.value)) {
        cmd = re.cmd();
      }
    }
    return cmd;
  }
  // Pulls `image` into node i and starts LifecycleService/Upgrade from it (the pull done).
  absl::StatusOr<std::shared_ptr<Mailbox<ProgressItem>>> PullAndStartInstall(
      size_t i, const std::string& image) {
    cluster_->PullImage(N(i), image);
    clock_->AdvanceBy(timings_.image_pull);
    return cluster_->LifecycleUpgrade(N(i), image);
  }
  // The last item of a finished install's stream.
  static ProgressItem LastItem(Mailbox<ProgressItem>& box) {
    ProgressItem last;
    while (auto item = box.Pop(milliseconds(0))) last = *item;
    return last;
  }
  // How long a default reboot sequence stays up: its cleanup and stopServices phases.
  milliseconds RebootStops() const { return 2 * timings_.stop; }
  absl::StatusOr<std::string> Upgrade(size_t i, LegacyUpgradeParams p) {
    auto box = cluster_->LegacyUpgrade(N(i), p);
    clock_->AdvanceBy(timings_.image_pull);
    auto result = box->Pop(milliseconds(0));
    if (!result) return absl::InternalError("no answer after the image pull time");
    return *result;
  }
  LegacyUpgradeParams Params(std::string image = kImage) {
    LegacyUpgradeParams p;
    p.image = std::move(image);
    return p;
  }

  Timings timings_;
  std::shared_ptr<ManualScheduler> clock_ = std::make_shared<ManualScheduler>();
  Journal journal_;
  std::unique_ptr<SimCluster> cluster_;
};

TEST_F(NodeStateTest, BootsReadyWithEtcdLeader) {
  StartHa();
  for (size_t i = 0; i < 4; ++i) {
    NodeSnapshot s = Snap(i);
    EXPECT_TRUE(s.up && s.ready && s.kube_ready);
    EXPECT_EQ(s.stage, MachineStage::kRunning);
    EXPECT_EQ(s.talos_tag, "v1.11.6");
    EXPECT_EQ(s.boot_id.size(), 36u);
  }
  EXPECT_TRUE(Snap(0).etcd_leader);
  EXPECT_FALSE(Snap(3).etcd_member_id.has_value());
}

TEST_F(NodeStateTest, LegacyUpgradeRunsTheSequenceAndRebootsIntoTheNewVersion) {
  StartHa();
  const std::string boot_id = Snap(1).boot_id;
  auto actor = Upgrade(1, Params());
  ASSERT_TRUE(actor.ok()) << actor.status();
  EXPECT_EQ(actor->size(), 36u);
  EXPECT_EQ(Snap(1).stage, MachineStage::kUpgrading);
  // Talos checks no readiness in UPGRADING: its status says ready, nothing unmet.
  ASSERT_FALSE(Stages(1).empty());
  EXPECT_EQ(Stages(1).back().stage(), machine::MachineStatusEvent::UPGRADING);
  EXPECT_TRUE(Stages(1).back().status().ready());
  EXPECT_EQ(Stages(1).back().status().unmet_conditions_size(), 0);
  EXPECT_TRUE(Snap(1).unschedulable);  // the drain phase cordons
  clock_->AdvanceBy(timings_.drain + timings_.install);
  // Down: RestartEvent published, streams' generation moved on.
  NodeSnapshot down = Snap(1);
  EXPECT_FALSE(down.up);
  EXPECT_EQ(down.stage, MachineStage::kRebooting);
  EXPECT_EQ(down.slot_b, "v1.12.4");
  EXPECT_THAT(Phases(1), ElementsAre("drain", "cleanup", "dbus", "stopServices", "unmount",
                                     "unmountBind", "unmountSystem", "volumeFinalize", "upgrade",
                                     "meta", "kexec", "stopEverything", "reboot"));
  EXPECT_EQ(EventNames(1).back(), "RestartEvent");
  {
    std::lock_guard lock(cluster_->mu());
    for (const auto& ev : N(1).events) {
      if (ev.type_url.ends_with("PhaseEvent")) {
        EXPECT_EQ(ev.actor_id, *actor);
      }
    }
  }
  // A leader elsewhere keeps quorum.
  EXPECT_FALSE(Snap(1).etcd_leader);
  clock_->AdvanceBy(timings_.reboot);
  NodeSnapshot booting = Snap(1);
  EXPECT_TRUE(booting.up);
  EXPECT_EQ(booting.stage, MachineStage::kBooting);
  EXPECT_EQ(booting.talos_tag, "v1.12.4");
  EXPECT_EQ(booting.active_slot, 'B');
  EXPECT_NE(booting.boot_id, boot_id);
  EXPECT_EQ(EventNames(1).front(), "SequenceEvent");  // buffer restarted at boot
  clock_->AdvanceBy(timings_.boot / 2);
  EXPECT_EQ(Snap(1).stage, MachineStage::kRunning);
  EXPECT_FALSE(Snap(1).ready);
  EXPECT_THAT(Snap(1).unmet_conditions, ElementsAre("nodeReady"));
  clock_->AdvanceBy(timings_.boot / 2);
  EXPECT_TRUE(Snap(1).ready);
  EXPECT_FALSE(Snap(1).unschedulable);  // Talos uncordons after the upgrade
  auto stages = Stages(1);
  ASSERT_GE(stages.size(), 3u);
  EXPECT_EQ(stages.front().stage(), machine::MachineStatusEvent::BOOTING);
  EXPECT_EQ(stages.back().stage(), machine::MachineStatusEvent::RUNNING);
  EXPECT_TRUE(stages.back().status().ready());
}

TEST_F(NodeStateTest, PhasesFollowTheVersion) {
  Start({Node("cp-1", NodeRole::kControlPlane, "v1.7.7"),
         Node("cp-2", NodeRole::kControlPlane, "v1.7.7"),
         Node("cp-3", NodeRole::kControlPlane, "v1.7.7"),
         Node("w-1", NodeRole::kWorker, "v1.14.0")});
  ASSERT_TRUE(Upgrade(0, Params("ghcr.io/siderolabs/installer:v1.8.4")).ok());
  auto p = Params(
      "factory.talos.dev/metal-installer/"
      "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba:v1.15.0");
  p.powercycle = true;
  ASSERT_TRUE(Upgrade(3, p).ok());
  clock_->AdvanceBy(timings_.drain + timings_.install);
  EXPECT_THAT(Phases(0),
              ElementsAre("drain", "cleanup", "dbus", "leave", "stopServices", "unmountUser",
                          "unmount", "unmountBind", "unmountSystem", "verifyDisk", "upgrade",
                          "meta", "kexec", "stopEverything", "reboot"));
  EXPECT_THAT(Phases(3),
              ElementsAre("denyNewServices", "drain", "cleanup", "dbus", "stopServices", "unmount",
                          "unmountBind", "unmountPromotable", "unmountSystem", "volumeFinalize",
                          "upgrade", "meta", "stopEverything", "reboot"));
}

// Task names as upstream's task functions report them (docs/talos-api.md §6.2).
TEST_F(NodeStateTest, UpgradeTaskNamesFollowUpstream) {
  Start({Node("cp-1", NodeRole::kControlPlane, "v1.7.7"),
         Node("cp-2", NodeRole::kControlPlane, "v1.7.7"),
         Node("cp-3", NodeRole::kControlPlane, "v1.7.7"), Node("w-1", NodeRole::kWorker, "v1.12.4"),
         Node("w-2", NodeRole::kWorker, "v1.14.0")});
  ASSERT_TRUE(Upgrade(0, Params("ghcr.io/siderolabs/installer:v1.8.4")).ok());
  ASSERT_TRUE(Upgrade(3, Params("ghcr.io/siderolabs/installer:v1.13.2")).ok());
  ASSERT_TRUE(Upgrade(4, Params("factory.talos.dev/metal-installer/"
                                "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba:"
                                "v1.15.0"))
                  .ok());
  clock_->AdvanceBy(timings_.drain + timings_.install);
  EXPECT_THAT(Tasks(0), ElementsAre("cordonAndDrainNode", "removeAllPods", "stopDBus", "leaveEtcd",
                                    "stopServicesForUpgrade", "unmountUserDisks",
                                    "unmountOverlayFilesystems", "unmountPodMounts",
                                    "unmountSystemDiskBindMounts", "unmountEphemeralPartition",
                                    "unmountStatePartition", "verifyDiskAvailability", "upgrade",
                                    "reloadMeta", "kexecPrepare", "stopAllServices", "reboot"));
  EXPECT_THAT(Tasks(3),
              ElementsAre("cordonAndDrainNode", "stopAllPods", "stopDBus", "stopServicesForUpgrade",
                          "unmountPodMounts", "unmountSystemDiskBindMounts",
                          "unmountEphemeralPartition", "teardownLifecycle", "upgrade", "reloadMeta",
                          "kexecPrepare", "stopAllServices", "reboot"));
  EXPECT_THAT(Tasks(4),
              ElementsAre("denyNewServices", "cordonAndDrainNode", "stopAllPods", "stopDBus",
                          "stopServicesForUpgrade", "unmountPodMounts",
                          "unmountSystemDiskBindMounts", "unmountPromotableSystemPartitions",
                          "unmountEphemeralPartition", "teardownLifecycle", "upgrade", "reloadMeta",
                          "kexecPrepare", "stopAllServices", "reboot"));
  EXPECT_EQ(RestartCmd(3), 0x45584543);  // kexec
}

// Reboot runs the metal list of the node's minor; the node stays up until the reboot phase.
TEST_F(NodeStateTest, RebootRunsTheMetalPhasesAndGoesDownAtTheRebootPhase) {
  Start({Node("cp-1", NodeRole::kControlPlane, "v1.12.4"),
         Node("w-1", NodeRole::kWorker, "v1.12.4"), Node("w-2", NodeRole::kWorker, "v1.14.0")});
  ASSERT_TRUE(cluster_->Reboot(N(1)).ok());
  ASSERT_TRUE(cluster_->Reboot(N(2)).ok());
  clock_->RunDue();
  EXPECT_TRUE(Snap(1).up);
  EXPECT_EQ(Snap(1).stage, MachineStage::kRebooting);
  EXPECT_THAT(Phases(1), ElementsAre("cleanup"));
  clock_->AdvanceBy(timings_.stop);
  EXPECT_TRUE(Snap(1).up);
  EXPECT_THAT(Phases(1), ElementsAre("cleanup", "dbus", "stopServices"));
  clock_->AdvanceBy(timings_.stop);
  EXPECT_FALSE(Snap(1).up);
  EXPECT_THAT(Phases(1),
              ElementsAre("cleanup", "dbus", "stopServices", "umount", "unmountBind",
                          "unmountSystem", "volumeFinalize", "kexec", "stopEverything", "reboot"));
  EXPECT_THAT(Tasks(1),
              ElementsAre("stopAllPods", "stopDBus", "stopServicesForUpgrade", "unmountPodMounts",
                          "unmountSystemDiskBindMounts", "unmountEphemeralPartition",
                          "teardownLifecycle", "kexecPrepare", "stopAllServices", "reboot"));
  EXPECT_EQ(EventNames(1).back(), "RestartEvent");
  EXPECT_EQ(RestartCmd(1), 0x45584543);  // kexec
  // 1.14 denies new services first, unmounts promotable partitions, and loads kexec last.
  EXPECT_THAT(Phases(2), ElementsAre("cleanup", "dbus", "denyNewServices", "stopServices", "umount",
                                     "unmountBind", "unmountPromotable", "unmountSystem",
                                     "volumeFinalize", "stopEverything", "kexec", "reboot"));
  clock_->AdvanceBy(timings_.reboot + timings_.boot);
  EXPECT_TRUE(Snap(1).ready);
  EXPECT_EQ(Snap(1).boots, 2);
}

TEST_F(NodeStateTest, ForceRebootRunsOnlyTheRebootPhaseFrom112) {
  Start({Node("cp-1", NodeRole::kControlPlane, "v1.12.4"),
         Node("w-1", NodeRole::kWorker, "v1.12.4"), Node("w-2", NodeRole::kWorker, "v1.11.6")});
  ASSERT_TRUE(cluster_->Reboot(N(1), SimRebootMode::kForce).ok());
  ASSERT_TRUE(cluster_->Reboot(N(2), SimRebootMode::kForce).ok());
  clock_->RunDue();
  EXPECT_FALSE(Snap(1).up);
  EXPECT_THAT(Phases(1), ElementsAre("reboot"));
  EXPECT_THAT(Tasks(1), ElementsAre("reboot"));
  EXPECT_EQ(RestartCmd(1), 0x01234567);  // nothing loaded kexec
  // 1.11 ignores the mode.
  EXPECT_TRUE(Snap(2).up);
  clock_->AdvanceBy(RebootStops());
  EXPECT_FALSE(Snap(2).up);
  EXPECT_THAT(Phases(2),
              ElementsAre("cleanup", "dbus", "stopServices", "umount", "unmountBind",
                          "unmountSystem", "volumeFinalize", "kexec", "stopEverything", "reboot"));
}

TEST_F(NodeStateTest, PowercycleRebootRunsTheKexecPhaseWithoutKexec) {
  Start({Node("cp-1", NodeRole::kControlPlane, "v1.13.2"),
         Node("w-1", NodeRole::kWorker, "v1.13.2")});
  ASSERT_TRUE(cluster_->Reboot(N(1), SimRebootMode::kPowercycle).ok());
  clock_->AdvanceBy(RebootStops());
  EXPECT_FALSE(Snap(1).up);
  EXPECT_THAT(Phases(1),
              ElementsAre("cleanup", "dbus", "stopServices", "umount", "unmountBind",
                          "unmountSystem", "volumeFinalize", "kexec", "stopEverything", "reboot"));
  EXPECT_EQ(RestartCmd(1), 0x01234567);  // LINUX_REBOOT_CMD_RESTART
  std::vector<std::string> downs;
  for (const auto& e : journal_.Entries()) {
    if (e.what == "down" && e.node == "w-1") downs.push_back(e.detail);
  }
  EXPECT_THAT(downs, ElementsAre("reboot"));
}

TEST_F(NodeStateTest, RollbackRunsTheDefaultRebootSequence) {
  StartHa("v1.13.2");
  {
    std::lock_guard lock(cluster_->mu());
    N(3).slots[1] = "v1.12.4";
    N(3).slot_images[1] = kImage;
  }
  ASSERT_TRUE(cluster_->Rollback(N(3)).ok());
  clock_->RunDue();
  EXPECT_TRUE(Snap(3).up);
  clock_->AdvanceBy(RebootStops());
  EXPECT_FALSE(Snap(3).up);
  EXPECT_THAT(Phases(3),
              ElementsAre("cleanup", "dbus", "stopServices", "umount", "unmountBind",
                          "unmountSystem", "volumeFinalize", "kexec", "stopEverything", "reboot"));
  EXPECT_EQ(RestartCmd(3), 0x45584543);
  clock_->AdvanceBy(timings_.reboot + timings_.boot);
  EXPECT_EQ(Snap(3).talos_tag, "v1.12.4");
}

TEST_F(NodeStateTest, StagedUpgradeRunsStageUpgradeAndComesBackUpgraded) {
  StartHa();
  auto p = Params();
  p.stage = true;
  ASSERT_TRUE(Upgrade(3, p).ok());
  EXPECT_THAT(Phases(3),
              ElementsAre("cleanup", "dbus", "stopServices", "umount", "unmountBind",
                          "unmountSystem", "volumeFinalize", "kexec", "stopEverything", "reboot"));
  EXPECT_EQ(RestartCmd(3), 0x45584543);  // kexec
  clock_->AdvanceBy(timings_.reboot + timings_.boot);
  EXPECT_EQ(Snap(3).talos_tag, "v1.12.4");
  EXPECT_TRUE(Snap(3).ready);
}

TEST_F(NodeStateTest, BadInstallerImagesFailValidation) {
  StartHa("v1.13.2");
  auto missing_tag = Upgrade(3, Params("ghcr.io/siderolabs/installer"));
  EXPECT_EQ(missing_tag.status().code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(missing_tag.status().message(),
            "error validating installer image \"ghcr.io/siderolabs/installer\": failed to pull "
            "image \"ghcr.io/siderolabs/installer:latest\": failed to resolve reference "
            "\"ghcr.io/siderolabs/installer:latest\": ghcr.io/siderolabs/installer:latest: not "
            "found");
  // The vanilla installer is not published from 1.14 on.
  EXPECT_FALSE(Upgrade(3, Params("ghcr.io/siderolabs/installer:v1.14.0")).ok());
  ASSERT_TRUE(
      cluster_
          ->InjectFault(
              N(3),
              {.kind = FaultKind::kBadInstallerImage, .count = 1, .delay = {}, .image = "v1.13.3"})
          .ok());
  EXPECT_FALSE(Upgrade(3, Params("ghcr.io/siderolabs/installer:v1.13.3")).ok());
  EXPECT_TRUE(Upgrade(3, Params("ghcr.io/siderolabs/installer:v1.13.3")).ok());  // used up
}

TEST_F(NodeStateTest, EtcdChecksUseTalosWording) {
  Start({Node("cp-1", NodeRole::kControlPlane), Node("cp-2", NodeRole::kControlPlane)});
  auto two = Upgrade(0, Params());
  EXPECT_EQ(two.status().code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(two.status().message(),
            "error validating etcd for upgrade: etcd member count(2) is insufficient to maintain "
            "quorum if upgrade commences");
  auto forced = Params();
  forced.force = true;
  EXPECT_TRUE(Upgrade(0, forced).ok());
}

TEST_F(NodeStateTest, EtcdMemberNotStartedOrUnhealthyBlocksControlPlaneUpgrades) {
  StartHa();
  ASSERT_TRUE(
      cluster_
          ->InjectFault(N(2),
                        {.kind = FaultKind::kEtcdUnhealthy, .count = -1, .delay = {}, .image = {}})
          .ok());
  auto unhealthy = Upgrade(0, Params());
  EXPECT_THAT(std::string(unhealthy.status().message()),
              HasSubstr(fmt::format("etcd member {:016x} is not healthy; all members must be "
                                    "healthy to perform an upgrade",
                                    N(2).etcd_member_id)));
  EXPECT_TRUE(Upgrade(3, Params()).ok());  // workers skip etcd checks
  cluster_->ClearFaults(N(2), FaultKind::kEtcdUnhealthy);
  ASSERT_TRUE(Upgrade(1, Params()).ok());
  clock_->AdvanceBy(timings_.drain + timings_.install);
  ASSERT_FALSE(Snap(1).up);
  auto not_started = Upgrade(0, Params());
  EXPECT_THAT(std::string(not_started.status().message()),
              HasSubstr(fmt::format("etcd member {:016x} is not started, all members must be "
                                    "running to perform an upgrade",
                                    N(1).etcd_member_id)));
}

TEST_F(NodeStateTest, SingleMemberRefusalOnlyUpTo17) {
  Start({Node("cp-1", NodeRole::kControlPlane, "v1.7.7")});
  auto refused = Upgrade(0, Params("ghcr.io/siderolabs/installer:v1.8.4"));
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("only 1 etcd member found; assuming this is not an HA setup and refusing "
                        "to upgrade; if this is a single-node cluster, use --preserve to upgrade"));
  auto preserve = Params("ghcr.io/siderolabs/installer:v1.8.4");
  preserve.preserve = true;
  EXPECT_TRUE(Upgrade(0, preserve).ok());
}

TEST_F(NodeStateTest, UpgradeLockHeldFailsWithTheMutexMessage) {
  StartHa();
  ASSERT_TRUE(
      cluster_
          ->InjectFault(N(0),
                        {.kind = FaultKind::kUpgradeLockHeld, .count = 1, .delay = {}, .image = {}})
          .ok());
  auto locked = Upgrade(0, Params());
  EXPECT_EQ(locked.status().code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(locked.status().message(),
            "failed to acquire upgrade mutex: error trying to lock etcd upgrade mutex: mutex: "
            "Locked by another session");
  EXPECT_TRUE(Upgrade(0, Params()).ok());
}

TEST_F(NodeStateTest, SecondUpgradeWhileOneRunsPublishesLocked) {
  StartHa();
  auto first = Upgrade(3, Params());
  ASSERT_TRUE(first.ok());
  auto second = Upgrade(3, Params());
  ASSERT_TRUE(second.ok());  // accepted by the RPC...
  std::lock_guard lock(cluster_->mu());
  // The second call's installer is already in the system containerd: it answers at once, and
  // its only event is the LOCKED one.
  auto locked = std::find_if(N(3).events.begin(), N(3).events.end(),
                             [&](const NodeEvent& e) { return e.actor_id == *second; });
  ASSERT_NE(locked, N(3).events.end());
  machine::SequenceEvent ev;
  ASSERT_TRUE(ev.ParseFromString(locked->value));
  EXPECT_EQ(ev.action(), machine::SequenceEvent::NOOP);
  EXPECT_EQ(ev.error().code(), common::LOCKED);
  EXPECT_EQ(ev.error().message(), "sequence not started: locked");
}

// A fatal boot error with the fallback armed reverts to the old slot (talos machined main.go
// handle -> revert.go, v1.14.0-rc.1).
TEST_F(NodeStateTest, BootFailureWhileArmedRevertsToTheOldSlot) {
  StartHa();
  ASSERT_TRUE(cluster_
                  ->InjectFault(
                      N(3), {.kind = FaultKind::kBootFailure, .count = 1, .delay = {}, .image = {}})
                  .ok());
  ASSERT_TRUE(Upgrade(3, Params()).ok());
  clock_->AdvanceBy(timings_.drain + timings_.install + timings_.reboot + timings_.boot);
  NodeSnapshot s = Snap(3);
  EXPECT_TRUE(s.ready);
  EXPECT_EQ(s.talos_tag, "v1.11.6");
  EXPECT_EQ(s.active_slot, 'A');
  EXPECT_EQ(s.slot_b, "v1.12.4");
  EXPECT_EQ(s.fallback_slot, "");
  EXPECT_EQ(s.boots, 2);
}

// Not Ready is no reason to revert: the node stays on the new version, the fallback armed, and a
// fatal boot error later (here at a plain reboot) still reverts it.
TEST_F(NodeStateTest, NeverReadyStaysOnTheNewVersionArmedUntilAFatalBootError) {
  StartHa();
  ASSERT_TRUE(cluster_
                  ->InjectFault(
                      N(3), {.kind = FaultKind::kNeverReady, .count = -1, .delay = {}, .image = {}})
                  .ok());
  ASSERT_TRUE(Upgrade(3, Params()).ok());
  clock_->AdvanceBy(timings_.drain + timings_.install + timings_.reboot + std::chrono::hours(1));
  NodeSnapshot s = Snap(3);
  EXPECT_EQ(s.talos_tag, "v1.12.4");
  EXPECT_EQ(s.stage, MachineStage::kRunning);
  EXPECT_FALSE(s.ready);
  EXPECT_THAT(s.unmet_conditions, ElementsAre("nodeReady"));
  EXPECT_EQ(s.fallback_slot, "A");
  ASSERT_TRUE(cluster_
                  ->InjectFault(
                      N(3), {.kind = FaultKind::kBootFailure, .count = 1, .delay = {}, .image = {}})
                  .ok());
  ASSERT_TRUE(cluster_->Reboot(N(3)).ok());
  clock_->AdvanceBy(RebootStops() + timings_.reboot + timings_.boot);
  s = Snap(3);
  EXPECT_EQ(s.talos_tag, "v1.11.6");
  EXPECT_EQ(s.active_slot, 'A');
  EXPECT_TRUE(s.ready);  // never_ready hits only boots with the fallback armed
}

// Running and Ready commits the new slot: a fatal boot error afterwards reverts nothing.
TEST_F(NodeStateTest, RunningAndReadyDropsTheFallback) {
  StartHa();
  ASSERT_TRUE(Upgrade(3, Params()).ok());
  clock_->AdvanceBy(timings_.drain + timings_.install + timings_.reboot + timings_.boot);
  ASSERT_TRUE(Snap(3).ready);
  EXPECT_EQ(Snap(3).fallback_slot, "");
  ASSERT_TRUE(cluster_
                  ->InjectFault(
                      N(3), {.kind = FaultKind::kBootFailure, .count = 1, .delay = {}, .image = {}})
                  .ok());
  ASSERT_TRUE(cluster_->Reboot(N(3)).ok());
  clock_->AdvanceBy(RebootStops() + timings_.reboot + timings_.boot);
  EXPECT_EQ(Snap(3).talos_tag, "v1.12.4");
  EXPECT_EQ(Snap(3).active_slot, 'B');
}

TEST_F(NodeStateTest, NeverReturnsUntilCleared) {
  StartHa();
  ASSERT_TRUE(
      cluster_
          ->InjectFault(N(3),
                        {.kind = FaultKind::kNeverReturns, .count = 1, .delay = {}, .image = {}})
          .ok());
  ASSERT_TRUE(cluster_->Reboot(N(3)).ok());
  clock_->AdvanceBy(std::chrono::minutes(30));
  EXPECT_FALSE(Snap(3).up);
  cluster_->ClearFaults(N(3), std::nullopt);
  clock_->AdvanceBy(timings_.reboot + timings_.boot);
  EXPECT_TRUE(Snap(3).ready);
}

TEST_F(NodeStateTest, SlowRebootStaysDownLonger) {
  StartHa();
  ASSERT_TRUE(cluster_
                  ->InjectFault(N(3), {.kind = FaultKind::kSlowReboot,
                                       .count = -1,
                                       .delay = std::chrono::seconds(60),
                                       .image = {}})
                  .ok());
  ASSERT_TRUE(cluster_->Reboot(N(3)).ok());
  clock_->AdvanceBy(RebootStops() + timings_.reboot + std::chrono::seconds(59));
  EXPECT_FALSE(Snap(3).up);
  clock_->AdvanceBy(std::chrono::seconds(1));
  EXPECT_TRUE(Snap(3).up);
}

TEST_F(NodeStateTest, LeaderMovesWhenTheLeaderGoesDown) {
  StartHa();
  ASSERT_TRUE(Snap(0).etcd_leader);
  ASSERT_TRUE(cluster_->Reboot(N(0)).ok());
  clock_->AdvanceBy(RebootStops());
  EXPECT_FALSE(Snap(0).up);
  EXPECT_TRUE(Snap(1).etcd_leader || Snap(2).etcd_leader);
  // Losing a second member loses quorum: no leader at all.
  ASSERT_TRUE(cluster_->Reboot(N(1)).ok());
  clock_->AdvanceBy(RebootStops());
  std::lock_guard lock(cluster_->mu());
  EXPECT_EQ(cluster_->EtcdLeaderLocked(), 0u);
}

TEST_F(NodeStateTest, LifecycleUpgradeInstallsWithoutRebootThenRebootActivates) {
  StartHa("v1.13.2");
  const std::string image =
      "factory.talos.dev/metal-installer/"
      "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba:v1.14.1";
  cluster_->PullImage(N(3), image);
  clock_->AdvanceBy(timings_.image_pull);
  auto box = cluster_->LifecycleUpgrade(N(3), image);
  ASSERT_TRUE(box.ok()) << box.status();
  auto busy = cluster_->LifecycleUpgrade(N(3), image);
  EXPECT_EQ(busy.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(busy.status().message(), "another installation/upgrade is already in progress");
  clock_->AdvanceBy(timings_.install);
  std::vector<ProgressItem> items;
  while (auto item = (*box)->Pop(milliseconds(0))) items.push_back(*item);
  ASSERT_FALSE(items.empty());
  EXPECT_TRUE(items.back().final);
  EXPECT_EQ(items.back().exit_code, 0);
  NodeSnapshot installed = Snap(3);
  EXPECT_TRUE(installed.up);
  EXPECT_EQ(installed.talos_tag, "v1.13.2");
  EXPECT_EQ(installed.next_boot_slot, "B");
  ASSERT_TRUE(cluster_->Reboot(N(3)).ok());
  clock_->AdvanceBy(RebootStops() + timings_.reboot + timings_.boot);
  EXPECT_EQ(Snap(3).talos_tag, "v1.14.1");
  // Rollback returns to the other slot and reboots.
  ASSERT_TRUE(cluster_->Rollback(N(3)).ok());
  clock_->AdvanceBy(RebootStops() + timings_.reboot + timings_.boot);
  EXPECT_EQ(Snap(3).talos_tag, "v1.13.2");
  EXPECT_EQ(Snap(3).active_slot, 'A');
  auto empty = cluster_->LifecycleUpgrade(N(3), "");
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
}

// A 1.14 node whose configuration holds the 1.14 documents (generated the 1.14 way) cannot go
// back to 1.13: the 1.13 installer refuses the configuration and exits 1; one made before 1.14
// (v1alpha1 only) can.
TEST_F(NodeStateTest, LifecycleDowngradeRefusedForDocumentsTheOlderInstallerDoesNotKnow) {
  NodeSpec generated = Node("w-1", NodeRole::kWorker, "v1.14.0");
  NodeSpec v1alpha1 = Node("w-2", NodeRole::kWorker, "v1.14.0");
  v1alpha1.config = ConfigShape::kV1Alpha1;
  Start({Node("cp-1", NodeRole::kControlPlane, "v1.14.0"), generated, v1alpha1});
  const std::string image = "ghcr.io/siderolabs/installer:v1.13.9";
  // The installer's output and exit code on node i.
  auto install = [&](size_t i) {
    cluster_->PullImage(N(i), image);
    clock_->AdvanceBy(timings_.image_pull);
    auto box = cluster_->LifecycleUpgrade(N(i), image);
    EXPECT_TRUE(box.ok()) << box.status();
    clock_->AdvanceBy(timings_.install);
    std::vector<ProgressItem> items;
    while (box.ok()) {
      auto item = (*box)->Pop(milliseconds(0));
      if (!item) break;
      items.push_back(*item);
    }
    return items;
  };
  std::vector<ProgressItem> refused = install(1);
  ASSERT_GE(refused.size(), 2u);
  EXPECT_EQ(refused.back().exit_code, 1);
  EXPECT_THAT(refused[refused.size() - 2].message,
              HasSubstr("error loading machine configuration: error decoding document "
                        "v1alpha1/UnattendedInstallConfig/ (line "));
  EXPECT_THAT(refused[refused.size() - 2].message,
              HasSubstr("\"UnattendedInstallConfig\" \"v1alpha1\": not registered"));
  EXPECT_EQ(Snap(1).next_boot_slot, "");
  EXPECT_EQ(Snap(1).fallback_slot, "");
  std::vector<ProgressItem> installed = install(2);
  ASSERT_FALSE(installed.empty());
  EXPECT_EQ(installed.back().exit_code, 0);
  EXPECT_EQ(Snap(2).next_boot_slot, "B");
}

// The machine loses power while the installer runs: nothing is written, the stream ends
// Unavailable, and the node comes back on its version with no slot armed.
TEST_F(NodeStateTest, APowerCycleDuringAnInstallWritesNothing) {
  StartHa("v1.13.2");
  auto box = PullAndStartInstall(3, "ghcr.io/siderolabs/installer:v1.13.9");
  ASSERT_TRUE(box.ok()) << box.status();
  clock_->AdvanceBy(timings_.install / 2);
  ASSERT_TRUE(cluster_->InjectFault(N(3), Fault{.kind = FaultKind::kPowerCycle,
                                               .count = -1,
                                               .delay = {},
                                               .image = {}})
                  .ok());
  clock_->AdvanceBy(timings_.install);
  EXPECT_EQ(LastItem(**box).error.code(), absl::StatusCode::kUnavailable);
  clock_->AdvanceBy(timings_.reboot + timings_.boot);
  NodeSnapshot back = Snap(3);
  EXPECT_EQ(back.boots, 2);
  EXPECT_EQ(back.talos_tag, "v1.13.2");
  EXPECT_EQ(back.slot_b, "");
  EXPECT_EQ(back.next_boot_slot, "");
  EXPECT_EQ(back.fallback_slot, "");
}

TEST_F(NodeStateTest, LifecycleUpgradeOfANonInstallerImageExitsNonZero) {
  StartHa("v1.13.2");
  auto box = PullAndStartInstall(3, "ghcr.io/siderolabs/kubelet:v1.35.0");
  ASSERT_TRUE(box.ok()) << box.status();
  ProgressItem last = LastItem(**box);
  EXPECT_TRUE(last.final);
  EXPECT_EQ(last.exit_code, 1);
  EXPECT_EQ(Snap(3).next_boot_slot, "");
}

TEST_F(NodeStateTest, RollbackWithoutAnotherSlotFails) {
  StartHa();
  auto st = cluster_->Rollback(N(0));
  EXPECT_EQ(st.code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(std::string(st.message()), HasSubstr("cannot rollback"));
}

TEST_F(NodeStateTest, ApplyConfigurationModesByVersion) {
  Start({Node("cp-1", NodeRole::kControlPlane, "v1.13.2"),
         Node("cp-2", NodeRole::kControlPlane, "v1.14.0")});
  std::string config;
  {
    std::lock_guard lock(cluster_->mu());
    config = N(0).machine_config;
  }
  const std::string kubelet = "ghcr.io/siderolabs/kubelet:v1.34.1";
  const std::string patched = std::string(config).replace(config.find(kubelet), kubelet.size(),
                                                          "ghcr.io/siderolabs/kubelet:v1.35.0");
  using Mode = machine::ApplyConfigurationRequest;
  auto reboot_114 = cluster_->ApplyConfiguration(N(1), config, Mode::REBOOT, false, {});
  EXPECT_EQ(reboot_114.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(reboot_114.status().message(),
            "the REBOOT mode is not supported, please use AUTO or NO_REBOOT modes instead");
  auto auto_114 = cluster_->ApplyConfiguration(N(1), config, Mode::AUTO, false, {});
  ASSERT_TRUE(auto_114.ok());
  EXPECT_EQ(auto_114->mode, Mode::NO_REBOOT);
  auto invalid = cluster_->ApplyConfiguration(N(0), "::: not yaml", Mode::NO_REBOOT, false, {});
  EXPECT_EQ(invalid.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string install_change =
      std::string(config).replace(config.find("/dev/sda"), 8, "/dev/nvme0n1");
  auto needs_reboot =
      cluster_->ApplyConfiguration(N(0), install_change, Mode::NO_REBOOT, false, {});
  EXPECT_EQ(needs_reboot.status().code(), absl::StatusCode::kInvalidArgument);
  auto chosen = cluster_->ApplyConfiguration(N(0), install_change, Mode::AUTO, true, {});
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(chosen->mode, Mode::REBOOT);
  auto live = cluster_->ApplyConfiguration(N(0), patched, Mode::NO_REBOOT, false, {});
  ASSERT_TRUE(live.ok());
  EXPECT_EQ(live->details, "Applied configuration without a reboot");
  clock_->AdvanceBy(timings_.pod_start);
  EXPECT_EQ(Snap(0).kubernetes_version, "1.35.0");
}

TEST_F(NodeStateTest, ResourcesVersionOnChange) {
  StartHa();
  const std::string key = "runtime/MachineStatuses.runtime.talos.dev/machine";
  uint64_t before = 0;
  {
    std::lock_guard lock(cluster_->mu());
    before = N(3).resources.at(key).version;
    EXPECT_TRUE(N(3).resources.contains("config/MachineConfigs.config.talos.dev/v1alpha1"));
    EXPECT_FALSE(N(3).resources.contains(
        "controlplane/APIServerConfigs.kubernetes.talos.dev/kube-apiserver"));
    EXPECT_TRUE(N(0).resources.contains(
        "controlplane/APIServerConfigs.kubernetes.talos.dev/kube-apiserver"));
  }
  ASSERT_TRUE(Upgrade(3, Params()).ok());
  std::lock_guard lock(cluster_->mu());
  EXPECT_GT(N(3).resources.at(key).version, before);
  EXPECT_EQ(N(3).cosi_log.back().type, CosiChange::kUpdated);
}

TEST_F(NodeStateTest, JournalRecordsStateChangesInOrder) {
  StartHa();
  ASSERT_TRUE(Upgrade(3, Params()).ok());
  clock_->AdvanceBy(timings_.drain + timings_.install + timings_.reboot + timings_.boot);
  std::vector<std::string> w1;
  for (const auto& e : journal_.Entries()) {
    if (e.node == "w-1" && (e.what == "down" || e.what == "up" || e.what == "version")) {
      w1.push_back(e.what);
    }
  }
  EXPECT_THAT(w1, ElementsAre("up", "down", "up", "version"));
}

}  // namespace
}  // namespace tr::sim
