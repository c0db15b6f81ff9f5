// The real gRPC Talos client against talos-sim: full upgrades of one node (legacy and 1.13+
// lifecycle), rollback, configuration changes and COSI watch.
#include <gmock/gmock.h>

#include "reconciler/clients/talos/talos_answers.h"
#include "resource/config/config.pb.h"
#include "resource/definitions/k8s/k8s.pb.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/wait.h"

namespace tr::reconciler::talos {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kVanilla[] = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";

// Parameter: whether a down node refuses connections (true) or answers UNAVAILABLE (false).
class ClientUpgradeTest : public SimTest, public ::testing::WithParamInterface<bool> {
 protected:
  void Start(const std::string& cp_version, const std::string& worker_version,
             const std::string& timings = "") {
    ASSERT_NO_FATAL_FAILURE(
        StartFleet(ThreeNodeFleet(cp_version, worker_version, timings), GetParam()));
    ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client_));
  }

  // Upgrades `node` with the legacy API and follows it until RUNNING and ready again.
  absl::StatusOr<FollowResult> LegacyUpgrade(const std::string& node, const std::string& image,
                                             std::vector<MachineEvent>* events = nullptr) {
    return FollowLegacyUpgrade(*client_, node, image, events);
  }

  std::unique_ptr<TalosClient> client_;
};

TEST_P(ClientUpgradeTest, LegacyUpgradeOfAControlPlaneNode) {
  ASSERT_NO_FATAL_FAILURE(Start("v1.11.6", "v1.11.6"));
  const std::string node = Address("cp-2");
  const std::string old_boot = Snapshot("cp-2").boot_id;
  std::vector<MachineEvent> events;
  FollowResult result;
  TR_ASSERT_OK_AND_ASSIGN(result,
                          LegacyUpgrade(node, "ghcr.io/siderolabs/installer:v1.12.4", &events));
  EXPECT_FALSE(result.actor_id.empty());
  EXPECT_NE(result.boot_id, old_boot);
  EXPECT_GE(result.subscriptions, 2);
  EXPECT_TRUE(result.status.RunningAndReady());
  // The actor id is the one the node gave its upgrade sequence. (Which of the sequence's
  // events arrive before the connection drops is a race, as on real nodes; the follower does
  // not depend on them.)
  bool sequence_of_actor = false;
  for (const auto& entry : fleet_->journal().Entries()) {
    sequence_of_actor |= entry.node == "cp-2" && entry.what == "sequence" &&
                         entry.detail.find(result.actor_id) != std::string::npos;
  }
  EXPECT_TRUE(sequence_of_actor);
  for (const auto& e : events) {
    if (!std::holds_alternative<MachineStatusEvent>(e.payload)) continue;
    EXPECT_TRUE(e.actor_id.empty() || e.actor_id == result.actor_id);
  }

  NodeVersion version;
  TR_ASSERT_OK_AND_ASSIGN(version, client_->Version(node));
  EXPECT_EQ(version.tag, "v1.12.4");
  std::vector<EtcdMember> members;
  TR_ASSERT_OK_AND_ASSIGN(members, client_->EtcdMemberList(node));
  bool voting = false;
  for (const auto& m : members) voting |= m.hostname == "cp-2" && !m.is_learner;
  EXPECT_TRUE(voting);
  EtcdMemberStatus etcd;
  TR_ASSERT_OK_AND_ASSIGN(etcd, client_->EtcdStatus(node));
  EXPECT_TRUE(etcd.errors.empty());

  // Never routed through the node being upgraded.
  const auto calls = Calls("cp-2", "/machine.MachineService/Upgrade");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_NE(calls[0].endpoint, "cp-2");
  EXPECT_FALSE(calls[0].endpoint.empty());
}

TEST_P(ClientUpgradeTest, LifecycleUpgradeOfAWorker) {
  ASSERT_NO_FATAL_FAILURE(Start("v1.13.0", "v1.13.0"));
  const std::string node = Address("w-1");
  const std::string image = fmt::format("factory.talos.dev/metal-installer/{}:v1.14.0", kVanilla);
  ImagePullResult pulled;
  // LifecycleService/Upgrade does not pull: without the image in the store it refuses.
  auto unpulled = client_->LifecycleUpgrade(node, image, core::InstallerStore::kSystem, {});
  EXPECT_EQ(unpulled.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(unpulled.status().message()),
              HasSubstr("not found in containerd store"));
  TR_ASSERT_OK_AND_ASSIGN(pulled, client_->PullImage(node, core::InstallerStore::kSystem, image));
  EXPECT_THAT(pulled.name, StartsWith(fmt::format(
                               "factory.talos.dev/metal-installer/{}@sha256:", kVanilla)));

  std::vector<std::string> lines;
  LifecycleUpgradeResult installed;
  TR_ASSERT_OK_AND_ASSIGN(installed,
                          client_->LifecycleUpgrade(node, image, core::InstallerStore::kSystem,
                                                    [&](const auto& l) { lines.push_back(l); }));
  EXPECT_EQ(installed.exit_code, 0);
  EXPECT_FALSE(installed.progress.empty());
  EXPECT_EQ(lines, installed.progress);
  // The lifecycle API only writes the other slot: still the old version, no reboot.
  EXPECT_EQ(Snapshot("w-1").talos_tag, "v1.13.0");

  std::string before;
  TR_ASSERT_OK_AND_ASSIGN(before, client_->BootId(node));
  EventsFollower follower(*client_, env_);
  FollowOptions options = Follow([&] { return client_->Reboot(node, RebootMode::kDefault); });
  options.boot_id_before = before;
  FollowResult result;
  TR_ASSERT_OK_AND_ASSIGN(result, follower.FollowUntilReady(node, options, {}));
  EXPECT_FALSE(result.actor_id.empty());
  NodeVersion version;
  TR_ASSERT_OK_AND_ASSIGN(version, client_->Version(node));
  EXPECT_EQ(version.tag, "v1.14.0");
}

// A second install while one runs: Talos refuses it in words the adapter recognises
// (talos_answers.h), keeping Talos' code.
TEST_P(ClientUpgradeTest, AnInstallWhileOneRunsIsMarkedInProgress) {
  // The first install lasts a second (not the fleet's 8 ms): the second call, made from the
  // first's opening progress message, must reach the node while it runs, however loaded the
  // machine (with 8 ms a CI run once lost that race and the second install succeeded).
  ASSERT_NO_FATAL_FAILURE(Start("v1.13.0", "v1.13.0", "{install: 1000s}"));
  const std::string node = Address("w-1");
  const std::string image = fmt::format("factory.talos.dev/metal-installer/{}:v1.14.0", kVanilla);
  ASSERT_TRUE(client_->PullImage(node, core::InstallerStore::kSystem, image).ok());
  absl::Status second = absl::OkStatus();
  bool asked = false;
  LifecycleUpgradeResult installed;
  TR_ASSERT_OK_AND_ASSIGN(
      installed,
      client_->LifecycleUpgrade(node, image, core::InstallerStore::kSystem, [&](const auto&) {
        if (asked) return;
        asked = true;  // the first is still running
        second = client_->LifecycleUpgrade(node, image, core::InstallerStore::kSystem, {}).status();
      }));
  EXPECT_EQ(installed.exit_code, 0);
  ASSERT_TRUE(asked);
  EXPECT_EQ(second.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(second.message()), HasSubstr("already in progress"));
  EXPECT_TRUE(InstallInProgress(second));
}

// The in-memory store (talosctl --namespace inmem, as Omni upgrades): the pull and the install
// go to the system containerd, which the CRI store does not see, and a reboot empties it
// (talos internal/app/internal/ctrhelper/ctrhelper.go picks the containerd by driver).
TEST_P(ClientUpgradeTest, TheInMemoryStoreIsPulledAndInstalledFromAndEmptiedByAReboot) {
  ASSERT_NO_FATAL_FAILURE(Start("v1.13.0", "v1.13.0"));
  const std::string node = Address("w-1");
  const std::string image = fmt::format("factory.talos.dev/metal-installer/{}:v1.14.0", kVanilla);
  ASSERT_TRUE(client_->PullImage(node, core::InstallerStore::kInMemory, image).ok());
  auto elsewhere = client_->LifecycleUpgrade(node, image, core::InstallerStore::kSystem, {});
  EXPECT_EQ(elsewhere.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(elsewhere.status().message()),
              HasSubstr("not found in containerd store"));

  std::string before;
  TR_ASSERT_OK_AND_ASSIGN(before, client_->BootId(node));
  EventsFollower follower(*client_, env_);
  FollowOptions options = Follow([&] { return client_->Reboot(node, RebootMode::kDefault); });
  options.boot_id_before = before;
  ASSERT_TRUE(follower.FollowUntilReady(node, options, {}).ok());
  auto after_reboot = client_->LifecycleUpgrade(node, image, core::InstallerStore::kInMemory, {});
  EXPECT_EQ(after_reboot.status().code(), absl::StatusCode::kInternal);

  ASSERT_TRUE(client_->PullImage(node, core::InstallerStore::kInMemory, image).ok());
  LifecycleUpgradeResult installed;
  TR_ASSERT_OK_AND_ASSIGN(
      installed, client_->LifecycleUpgrade(node, image, core::InstallerStore::kInMemory, {}));
  EXPECT_EQ(installed.exit_code, 0);
  EXPECT_EQ(Snapshot("w-1").next_boot_slot, "B") << "the other slot holds the new image";
}

TEST_P(ClientUpgradeTest, LifecycleAndImageServiceAreUnimplementedBelow113) {
  ASSERT_NO_FATAL_FAILURE(Start("v1.12.4", "v1.12.4"));
  const std::string node = Address("w-1");
  const std::string image = "ghcr.io/siderolabs/installer:v1.13.0";
  EXPECT_EQ(
      client_->LifecycleUpgrade(node, image, core::InstallerStore::kSystem, {}).status().code(),
      absl::StatusCode::kUnimplemented);
  EXPECT_EQ(client_->PullImage(node, core::InstallerStore::kSystem, image).status().code(),
            absl::StatusCode::kUnimplemented);
  // The legacy pre-pull exists.
  EXPECT_TRUE(client_
                  ->PullImageLegacy(node, ContainerdNamespace::kCri,
                                    "registry.k8s.io/kube-apiserver:v1.35.0")
                  .ok());
}

TEST_P(ClientUpgradeTest, RollbackReturnsToThePreviousSlot) {
  ASSERT_NO_FATAL_FAILURE(Start("v1.11.6", "v1.11.6"));
  const std::string node = Address("w-1");
  ASSERT_TRUE(LegacyUpgrade(node, "ghcr.io/siderolabs/installer:v1.12.4").ok());
  ASSERT_EQ(Snapshot("w-1").talos_tag, "v1.12.4");

  EventsFollower follower(*client_, env_);
  FollowOptions options = Follow([&]() -> absl::StatusOr<std::string> {
    if (auto status = client_->Rollback(node); !status.ok()) return status;
    return std::string();
  });
  TR_ASSERT_OK_AND_ASSIGN(options.boot_id_before, client_->BootId(node));
  ASSERT_TRUE(follower.FollowUntilReady(node, options, {}).ok());
  NodeVersion version;
  TR_ASSERT_OK_AND_ASSIGN(version, client_->Version(node));
  EXPECT_EQ(version.tag, "v1.11.6");
}

TEST_P(ClientUpgradeTest, ApplyConfigurationNoRebootUpdatesTheKubeletSpec) {
  ASSERT_NO_FATAL_FAILURE(Start("v1.11.6", "v1.11.6"));
  const std::string node = Address("w-1");
  CosiResource config;
  TR_ASSERT_OK_AND_ASSIGN(
      config, client_->CosiGet(node, "config", "MachineConfigs.config.talos.dev", "v1alpha1"));
  ::resource::config::MachineConfigSpec spec;
  ASSERT_TRUE(spec.ParseFromString(config.proto_spec));
  std::string yaml = spec.yaml_marshalled();
  const std::string old_image = "ghcr.io/siderolabs/kubelet:v1.34.1";
  const std::string new_image = "ghcr.io/siderolabs/kubelet:v1.35.0";
  ASSERT_NE(yaml.find(old_image), std::string::npos);
  yaml.replace(yaml.find(old_image), old_image.size(), new_image);

  // Apply the patched config without a reboot; the KubeletSpec follows it.
  ApplyConfigurationRequest request;
  request.config_yaml = yaml;
  request.mode = ApplyMode::kNoReboot;
  absl::StatusOr<ApplyConfigurationResult> result = client_->ApplyConfiguration(node, request);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->mode, ApplyMode::kNoReboot);
  std::string seen_image;
  EXPECT_TRUE(test_support::WaitUntil([&] {
    absl::StatusOr<CosiResource> kubelet_spec =
        client_->CosiGet(node, "k8s", "KubeletSpecs.kubernetes.talos.dev", "kubelet");
    ::talos::resource::definitions::k8s::KubeletSpecSpec kubelet;
    if (kubelet_spec.ok() && kubelet.ParseFromString(kubelet_spec->proto_spec)) {
      seen_image = kubelet.image();
    }
    return seen_image == new_image;
  }));
  EXPECT_EQ(seen_image, new_image);
}

TEST_P(ClientUpgradeTest, ApplyConfigurationModesByVersion) {
  ASSERT_NO_FATAL_FAILURE(Start("v1.14.0", "v1.13.0"));
  CosiResource config;
  TR_ASSERT_OK_AND_ASSIGN(config, client_->CosiGet(Address("cp-1"), "config",
                                                   "MachineConfigs.config.talos.dev", "v1alpha1"));
  ::resource::config::MachineConfigSpec spec;
  ASSERT_TRUE(spec.ParseFromString(config.proto_spec));
  ApplyConfigurationRequest request;
  request.config_yaml = spec.yaml_marshalled();
  request.mode = ApplyMode::kReboot;
  // 1.14+: REBOOT mode is gone.
  EXPECT_EQ(client_->ApplyConfiguration(Address("cp-1"), request).status().code(),
            absl::StatusCode::kUnimplemented);
  request.mode = ApplyMode::kAuto;
  request.dry_run = true;
  ApplyConfigurationResult result;
  TR_ASSERT_OK_AND_ASSIGN(result, client_->ApplyConfiguration(Address("cp-1"), request));
  EXPECT_EQ(result.mode, ApplyMode::kNoReboot);
  EXPECT_THAT(result.mode_details, HasSubstr("Dry run"));
  request.config_yaml = "not: a machine config";
  EXPECT_EQ(client_->ApplyConfiguration(Address("cp-1"), request).status().code(),
            absl::StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(DownNodes, ClientUpgradeTest, ::testing::Bool(),
                         [](const auto& p) { return p.param ? "Refusing" : "Unavailable"; });

}  // namespace
}  // namespace tr::reconciler::talos
