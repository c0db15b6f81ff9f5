// A staged install as real Talos does it, over the wire: LifecycleService/Upgrade writes the
// slot that does not boot next and the node keeps running its version until any reboot (a
// Reboot call, a crash, a power cycle) boots that slot; the in-memory image store is empty after
// a reboot; a second install goes over the pending slot as grub and sd-boot do (the running slot
// is rewritten and the pending one becomes the fallback); the fallback stays armed until the
// node is Running and Ready on the new slot. Upstream facts: docs/talos-api.md §6.5.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include "machine/lifecycle.grpc.pb.h"
#include "machine/machine.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/sim/fleet.h"
#include "tests/sim/test_client.h"

namespace tr::sim {
namespace {

using testing::Call;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// w-3 loses power 50 s (fleet time) after the start, from the fleet file.
constexpr const char* kStagedFleet = R"(
time_scale: 0.001
clusters:
  - name: prod
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.13.2, kubernetes: 1.34.1}
      - {name: w-1, role: worker, talos: v1.13.2, kubernetes: 1.34.1}
      - {name: w-2, role: worker, talos: v1.13.2, kubernetes: 1.34.1}
      - name: w-3
        role: worker
        talos: v1.13.2
        kubernetes: 1.34.1
        faults: [{kind: power_cycle, delay: 50s}]
)";

constexpr const char* kInstaller139 = "ghcr.io/siderolabs/installer:v1.13.9";
constexpr const char* kInstaller138 = "ghcr.io/siderolabs/installer:v1.13.8";
constexpr const char* kInstaller132 = "ghcr.io/siderolabs/installer:v1.13.2";

Fault StagedFault(FaultKind kind, int count) {
  return Fault{.kind = kind, .count = count, .delay = {}, .image = {}};
}

bool StagedBootedReady(const NodeSnapshot& n, int boots) {
  return n.boots == boots && n.stage == MachineStage::kRunning && n.ready;
}

class StagedInstallGrpcTest : public testing::ProdFleetTest {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartProdFleet(kStagedFleet, "sim-staged")); }

  // Into the namespace system of the containerd of `driver` (CONTAINERD: talosctl's inmem).
  grpc::Status PullSystem(const std::string& node, const std::string& image,
                          common::ContainerDriver driver) {
    return Pull(node, image, driver, common::NS_SYSTEM);
  }
  // LifecycleService/Upgrade from the store of `driver` (namespace system); the installer's
  // exit code, or -1 when the call failed (`status` says why).
  int Install(const std::string& node, const std::string& image, common::ContainerDriver driver,
              grpc::Status* status = nullptr) {
    auto lifecycle = machine::LifecycleService::NewStub(channel_);
    machine::LifecycleServiceUpgradeRequest req;
    req.mutable_containerd()->set_driver(driver);
    req.mutable_containerd()->set_namespace_(common::NS_SYSTEM);
    req.mutable_source()->set_image_name(image);
    auto ctx = Call(Addr(node));
    auto stream = lifecycle->Upgrade(ctx.get(), req);
    machine::LifecycleServiceUpgradeResponse item;
    int exit_code = -1;
    while (stream->Read(&item)) {
      if (item.progress().has_exit_code()) exit_code = item.progress().exit_code();
    }
    grpc::Status st = stream->Finish();
    if (status != nullptr) *status = st;
    return st.ok() ? exit_code : -1;
  }
  // Pulled into the CRI containerd (kept across reboots) and installed: exit code 0.
  void PullAndInstall(const std::string& node, const std::string& image) {
    auto pulled = PullSystem(node, image, common::CRI);
    ASSERT_TRUE(pulled.ok()) << pulled.error_message();
    ASSERT_EQ(Install(node, image, common::CRI), 0);
  }
  void WaitBooted(const std::string& node, int boots) {
    auto st = fleet_->WaitForNode(
        node, [boots](const NodeSnapshot& n) { return StagedBootedReady(n, boots); }, 20s);
    ASSERT_TRUE(st.ok()) << st;
  }
  void PowerCycle(const std::string& node) {
    ASSERT_TRUE(fleet_->InjectFault(node, StagedFault(FaultKind::kPowerCycle, -1)).ok());
  }
  int CallsTo(const std::string& node, const std::string& method) {
    int calls = 0;
    for (const auto& e : fleet_->journal().Entries()) {
      calls += e.node == node && e.what == method ? 1 : 0;
    }
    return calls;
  }
};

TEST_F(StagedInstallGrpcTest, TheNodeRunsItsVersionUntilARebootBootsTheInstalledSlot) {
  const std::string boot_id = BootId("w-1");
  ASSERT_NO_FATAL_FAILURE(PullAndInstall("w-1", kInstaller139));
  EXPECT_EQ(Tag("w-1"), "v1.13.2");
  EXPECT_EQ(BootId("w-1"), boot_id);
  auto pending = *fleet_->Node("w-1");
  EXPECT_EQ(pending.boots, 1);
  EXPECT_EQ(pending.slot_b, "v1.13.9");
  EXPECT_EQ(pending.next_boot_slot, "B");
  EXPECT_EQ(pending.fallback_slot, "A");
  EXPECT_TRUE(pending.ready);

  machine::RebootResponse rebooted;
  auto ctx = Call(Addr("w-1"));
  ASSERT_TRUE(machine_->Reboot(ctx.get(), {}, &rebooted).ok());
  ASSERT_NO_FATAL_FAILURE(WaitBooted("w-1", 2));
  EXPECT_EQ(Tag("w-1"), "v1.13.9");
  EXPECT_NE(BootId("w-1"), boot_id);
  EXPECT_EQ(fleet_->Node("w-1")->fallback_slot, "");  // Running and Ready: committed
}

TEST_F(StagedInstallGrpcTest, APowerCycleBootsTheInstalledSlotWithoutAnyCall) {
  const std::string boot_id = BootId("w-1");
  ASSERT_NO_FATAL_FAILURE(PullAndInstall("w-1", kInstaller139));
  PowerCycle("w-1");
  ASSERT_NO_FATAL_FAILURE(WaitBooted("w-1", 2));
  EXPECT_EQ(Tag("w-1"), "v1.13.9");
  EXPECT_NE(BootId("w-1"), boot_id);
  EXPECT_EQ(CallsTo("w-1", "/machine.MachineService/Reboot"), 0);
  bool sequence = false, down = false, fired = false;
  for (const auto& e : fleet_->journal().Entries()) {
    if (e.node != "w-1") continue;
    sequence = sequence || e.what == "sequence";
    down = down || (e.what == "down" && e.detail == "reboot");
    fired = fired || (e.what == "fault" && e.detail == "power_cycle fired");
  }
  EXPECT_FALSE(sequence);  // no reboot sequence ran: the power went
  EXPECT_TRUE(down);
  EXPECT_TRUE(fired);
  EXPECT_TRUE(fleet_->Node("w-1")->faults.empty());  // once by default
  // Without an install a power cycle comes back on the same version.
  PowerCycle("w-2");
  ASSERT_NO_FATAL_FAILURE(WaitBooted("w-2", 2));
  EXPECT_EQ(Tag("w-2"), "v1.13.2");
}

TEST_F(StagedInstallGrpcTest, APowerCycleFromTheFleetFileFiresAfterItsDelay) {
  ASSERT_NO_FATAL_FAILURE(WaitBooted("w-3", 2));
  EXPECT_EQ(Tag("w-3"), "v1.13.2");
  EXPECT_TRUE(fleet_->Node("w-3")->faults.empty());
}

TEST_F(StagedInstallGrpcTest, APowerCycleRepeatsCountTimesDelayApart) {
  Fault cuts = StagedFault(FaultKind::kPowerCycle, 2);
  cuts.delay = 100s;  // 0.1 s real: each cut finds the machine back up (reboot + boot: 16 ms)
  ASSERT_TRUE(fleet_->InjectFault("w-2", cuts).ok());
  ASSERT_NO_FATAL_FAILURE(WaitBooted("w-2", 3));
  EXPECT_TRUE(fleet_->Node("w-2")->faults.empty());
  int fired = 0;
  for (const auto& e : fleet_->journal().Entries()) {
    fired += e.node == "w-2" && e.detail == "power_cycle fired" ? 1 : 0;
  }
  EXPECT_EQ(fired, 2);
}

TEST_F(StagedInstallGrpcTest, ACrashBootsTheInstalledSlot) {
  ASSERT_NO_FATAL_FAILURE(PullAndInstall("w-1", kInstaller139));
  // reboot_after_pull: the machine loses power right after answering the next pull.
  ASSERT_TRUE(fleet_->InjectFault("w-1", StagedFault(FaultKind::kRebootAfterPull, 1)).ok());
  ASSERT_TRUE(PullSystem("w-1", kInstaller138, common::CRI).ok());
  ASSERT_NO_FATAL_FAILURE(WaitBooted("w-1", 2));
  EXPECT_EQ(Tag("w-1"), "v1.13.9");
}

TEST_F(StagedInstallGrpcTest, APullIntoTheInMemoryStoreIsLostAtAReboot) {
  ASSERT_TRUE(PullSystem("w-1", kInstaller139, common::CONTAINERD).ok());
  ASSERT_TRUE(PullSystem("w-1", kInstaller138, common::CRI).ok());
  PowerCycle("w-1");
  ASSERT_NO_FATAL_FAILURE(WaitBooted("w-1", 2));
  grpc::Status lost;
  EXPECT_EQ(Install("w-1", kInstaller139, common::CONTAINERD, &lost), -1);
  EXPECT_EQ(lost.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_THAT(lost.error_message(), HasSubstr("not found in containerd store"));
  // The CRI containerd keeps its images on EPHEMERAL.
  EXPECT_EQ(Install("w-1", kInstaller138, common::CRI), 0);
}

TEST_F(StagedInstallGrpcTest, ASecondInstallRewritesTheRunningSlotAndFallsBackToThePendingOne) {
  ASSERT_NO_FATAL_FAILURE(PullAndInstall("w-1", kInstaller139));
  ASSERT_NO_FATAL_FAILURE(PullAndInstall("w-1", kInstaller138));
  auto twice = *fleet_->Node("w-1");
  EXPECT_EQ(Tag("w-1"), "v1.13.2");  // still running from slot A, whose files were replaced
  EXPECT_EQ(twice.active_slot, 'A');
  EXPECT_EQ(twice.slot_a, "v1.13.8");
  EXPECT_EQ(twice.slot_b, "v1.13.9");
  EXPECT_EQ(twice.next_boot_slot, "A");
  EXPECT_EQ(twice.fallback_slot, "B");
  // The next boot runs the second install; a fatal boot error would fall back to the first.
  ASSERT_TRUE(fleet_->InjectFault("w-1", StagedFault(FaultKind::kBootFailure, 1)).ok());
  PowerCycle("w-1");
  ASSERT_NO_FATAL_FAILURE(WaitBooted("w-1", 2));
  EXPECT_EQ(Tag("w-1"), "v1.13.9");
}

TEST_F(StagedInstallGrpcTest, InstallingTheRunningVersionAgainUnstages) {
  ASSERT_NO_FATAL_FAILURE(PullAndInstall("w-1", kInstaller139));
  ASSERT_NO_FATAL_FAILURE(PullAndInstall("w-1", kInstaller132));
  auto unstaged = *fleet_->Node("w-1");
  EXPECT_EQ(unstaged.slot_a, "v1.13.2");
  EXPECT_EQ(unstaged.next_boot_slot, "A");
  EXPECT_EQ(unstaged.fallback_slot, "B");  // v1.13.9 stays the fallback until Running and Ready
  PowerCycle("w-1");
  ASSERT_NO_FATAL_FAILURE(WaitBooted("w-1", 2));
  EXPECT_EQ(Tag("w-1"), "v1.13.2");
  EXPECT_EQ(fleet_->Node("w-1")->fallback_slot, "");
}

TEST_F(StagedInstallGrpcTest, ARollbackOverAPendingInstallBootsTheRunningSlot) {
  ASSERT_NO_FATAL_FAILURE(PullAndInstall("w-1", kInstaller139));
  machine::RollbackResponse rolled;
  auto ctx = Call(Addr("w-1"));
  ASSERT_TRUE(machine_->Rollback(ctx.get(), {}, &rolled).ok());
  ASSERT_NO_FATAL_FAILURE(WaitBooted("w-1", 2));
  EXPECT_EQ(Tag("w-1"), "v1.13.2");
  EXPECT_EQ(fleet_->Node("w-1")->active_slot, 'A');
}

TEST_F(StagedInstallGrpcTest, TheFallbackStaysArmedUntilRunningAndReadyOnTheNewSlot) {
  ASSERT_NO_FATAL_FAILURE(PullAndInstall("w-1", kInstaller139));
  // The node stays Running and Ready on the old slot: the fallback is armed for the next boot.
  EXPECT_EQ(fleet_->Node("w-1")->fallback_slot, "A");
  // The new slot boots but never gets Ready: still armed, so a fatal error then reverts.
  ASSERT_TRUE(fleet_->InjectFault("w-1", StagedFault(FaultKind::kNeverReady, 1)).ok());
  PowerCycle("w-1");
  auto st = fleet_->WaitForNode(
      "w-1",
      [](const NodeSnapshot& n) {
        return n.boots == 2 && n.stage == MachineStage::kRunning && n.unmet_conditions.size() == 1;
      },
      20s);
  ASSERT_TRUE(st.ok()) << st;
  EXPECT_EQ(Tag("w-1"), "v1.13.9");
  EXPECT_EQ(fleet_->Node("w-1")->fallback_slot, "A");
  ASSERT_TRUE(fleet_->InjectFault("w-1", StagedFault(FaultKind::kBootFailure, 1)).ok());
  PowerCycle("w-1");
  ASSERT_NO_FATAL_FAILURE(WaitBooted("w-1", 3));
  EXPECT_EQ(Tag("w-1"), "v1.13.2");
  EXPECT_EQ(fleet_->Node("w-1")->fallback_slot, "");
}

// The control endpoint takes the fault as the fleet file spells it.
TEST(StagedControlTest, APowerCycleThroughTheControlEndpoint) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("sim-staged-control-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  auto spec = FleetSpec::Parse(R"(
time_scale: 0.001
clusters:
  - name: prod
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.13.2, kubernetes: 1.34.1}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  FleetOptions options;
  options.control_endpoint = true;
  auto started = Fleet::Start(*spec, dir, options);
  ASSERT_TRUE(started.ok()) << started.status();
  std::unique_ptr<Fleet> fleet = *std::move(started);
  httplib::Client client(fleet->control_url());
  auto injected =
      client.Post("/v1/nodes/cp-1/faults", R"({"kind":"power_cycle"})", "application/json");
  ASSERT_TRUE(injected);
  EXPECT_EQ(injected->status, 200);
  auto st = fleet->WaitForNode(
      "cp-1", [](const NodeSnapshot& n) { return StagedBootedReady(n, 2); }, 20s);
  EXPECT_TRUE(st.ok()) << st;
  fleet->Stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tr::sim
