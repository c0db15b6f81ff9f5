// A node whose ImageVerificationConfig denies the installer image (talos-sim, Talos 1.13+):
// every pull and the legacy Upgrade refuse it with Talos' code and text, and the executor's
// install step reports it naming the node and the image, as a refusal that halts the rollout.
#include <gmock/gmock.h>

#include "reconciler/error_class.h"
#include "reconciler/executor.h"
#include "tests/support/sim_fixture.h"

namespace tr::reconciler::talos {
namespace {

using ::testing::HasSubstr;

constexpr char kInstaller[] = "ghcr.io/siderolabs/installer:v1.13.9";

// w-1 skips verification for docker.io (rule 0000) and denies ghcr.io/siderolabs/* (0001).
std::string DenyingFleet() {
  return R"(
time_scale: 0.001
clusters:
  - name: prod
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.13.0, kubernetes: 1.34.1}
      - name: w-1
        role: worker
        talos: v1.13.0
        kubernetes: 1.34.1
        image_verification:
          - {image: "docker.io/*", skip: true}
          - {image: "ghcr.io/siderolabs/*", deny: true}
)";
}

class ImageVerificationTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(DenyingFleet()));
    std::unique_ptr<TalosClient> client;
    ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client));
    talos_ = std::move(client);
  }
  std::shared_ptr<TalosClient> talos_;
};

TEST_F(ImageVerificationTest, PullsOfADeniedImageAnswerTalosWords) {
  auto pulled = talos_->PullImage(Address("w-1"), core::InstallerStore::kSystem, kInstaller);
  EXPECT_EQ(pulled.status().code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(std::string(pulled.status().message()),
              HasSubstr("verification denied by matched rule (0001)"));
  absl::Status legacy =
      talos_->PullImageLegacy(Address("w-1"), ContainerdNamespace::kSystem, kInstaller);
  EXPECT_EQ(legacy.code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(std::string(legacy.message()),
              HasSubstr("verification denied by matched rule (0001)"));
  // The same image on a node without the document pulls.
  EXPECT_TRUE(talos_->PullImage(Address("cp-1"), core::InstallerStore::kSystem, kInstaller).ok());
}

TEST_F(ImageVerificationTest, LegacyUpgradeRefusesTheDeniedInstaller) {
  LegacyUpgradeRequest request;
  request.image = kInstaller;
  auto ack = talos_->Upgrade(Address("w-1"), request);
  EXPECT_EQ(ack.status().code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(std::string(ack.status().message()),
              HasSubstr(fmt::format("error validating installer image \"{}\": verification "
                                    "denied by matched rule (0001)",
                                    kInstaller)));
  EXPECT_EQ(Snapshot("w-1").talos_tag, "v1.13.0");
}

TEST_F(ImageVerificationTest, TheInstallStepHaltsNamingTheNodeAndTheImage) {
  core::ClusterProfile profile;
  profile.name = "prod";
  profile.nodes.push_back({"w-1", Address("w-1"), core::NodeRole::kWorker});
  FixedClusterClients clients(talos_, nullptr);
  TalosRolloutExecutor executor(clients, {}, Env::Default());
  core::RolloutDecision decision;
  decision.kind = core::ActionKind::kInstallImage;
  decision.node = "w-1";
  decision.image = kInstaller;
  absl::StatusOr<ActionResult> done = executor.Execute(profile, decision, {});
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.status().code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(std::string(done.status().message()),
              HasSubstr(fmt::format("pulling {}: ", kInstaller)));
  EXPECT_THAT(std::string(done.status().message()), HasSubstr(Address("w-1")));
  EXPECT_THAT(std::string(done.status().message()),
              HasSubstr("verification denied by matched rule (0001)"));
  EXPECT_EQ(ClassifyError(done.status(), ErrorSource::kAct), ErrorClass::kHalt);
  EXPECT_EQ(Snapshot("w-1").next_boot_slot, "");
}

}  // namespace
}  // namespace tr::reconciler::talos
