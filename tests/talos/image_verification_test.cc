// A node whose ImageVerificationConfig denies the installer image (talos-sim, Talos 1.13+):
// every pull and the legacy Upgrade refuse it with Talos' code and text, and the executor's
// install step reports it naming the node and the image, as a refusal that halts the rollout.
#include <gmock/gmock.h>

#include "reconciler/operations/error_class.h"
#include "reconciler/operations/executor.h"
#include "tests/support/sim_fixture.h"

namespace tr::reconciler::talos {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kInstaller[] = "ghcr.io/siderolabs/installer:v1.13.9";

// w-1 (1.13) and w-2 (1.14) skip verification for docker.io (rule 0000) and deny
// ghcr.io/siderolabs/* (0001).
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
        image_verification: &rules
          - {image: "docker.io/*", skip: true}
          - {image: "ghcr.io/siderolabs/*", deny: true}
      - name: w-2
        role: worker
        talos: v1.14.0
        kubernetes: 1.34.1
        image_verification: *rules
)";
}

constexpr char kDenied[] = "verification denied by matched rule (0001)";
// go-retry's ErrorSet around it: every pull on 1.13, the legacy Upgrade's on 1.14 too.
constexpr char kDeniedInRetryLoop[] =
    "1 error(s) occurred:\n\tverification denied by matched rule (0001)";

std::string Message(const absl::Status& status) { return std::string(status.message()); }

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
  auto on113 = talos_->PullImage(Address("w-1"), core::InstallerStore::kSystem, kInstaller);
  EXPECT_EQ(on113.status().code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(Message(on113.status()), EndsWith(std::string(": ") + kDeniedInRetryLoop));
  auto on114 = talos_->PullImage(Address("w-2"), core::InstallerStore::kSystem, kInstaller);
  EXPECT_EQ(on114.status().code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(Message(on114.status()), EndsWith(std::string(": ") + kDenied));
  absl::Status legacy =
      talos_->PullImageLegacy(Address("w-2"), ContainerdNamespace::kSystem, kInstaller);
  EXPECT_EQ(legacy.code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(Message(legacy), EndsWith(std::string(": ") + kDenied));
  // Another repository (no rule matches), and the same image on a node without the document.
  EXPECT_TRUE(talos_
                  ->PullImage(Address("w-2"), core::InstallerStore::kSystem,
                              "registry.k8s.io/kube-proxy:v1.34.1")
                  .ok());
  EXPECT_TRUE(talos_->PullImage(Address("cp-1"), core::InstallerStore::kSystem, kInstaller).ok());
}

TEST_F(ImageVerificationTest, LegacyUpgradeRefusesTheDeniedInstaller) {
  LegacyUpgradeRequest request;
  request.image = kInstaller;
  for (const char* node : {"w-1", "w-2"}) {
    auto ack = talos_->Upgrade(Address(node), request);
    EXPECT_EQ(ack.status().code(), absl::StatusCode::kUnknown) << node;
    EXPECT_THAT(Message(ack.status()),
                EndsWith(fmt::format("error validating installer image \"{}\": {}", kInstaller,
                                     kDeniedInRetryLoop)))
        << node;
  }
  EXPECT_EQ(Snapshot("w-1").talos_tag, "v1.13.0");
}

TEST_F(ImageVerificationTest, TheInstallStepHaltsNamingTheNodeAndTheImage) {
  core::ClusterProfile profile;
  profile.name = "prod";
  profile.nodes.push_back({"w-2", Address("w-2"), core::NodeRole::kWorker});
  FixedClusterClients clients(talos_, nullptr);
  TalosRolloutExecutor executor(clients, {}, Env::Default());
  core::RolloutDecision decision;
  decision.kind = core::ActionKind::kInstallImage;
  decision.node = "w-2";
  decision.image = kInstaller;
  absl::StatusOr<ActionResult> done = executor.Execute(profile, decision, {});
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.status().code(), absl::StatusCode::kUnknown);
  EXPECT_THAT(Message(done.status()), StartsWith(fmt::format("pulling {}: ", kInstaller)));
  EXPECT_THAT(Message(done.status()), HasSubstr(Address("w-2")));
  EXPECT_THAT(Message(done.status()), EndsWith(kDenied));
  EXPECT_EQ(ClassifyError(done.status(), ErrorSource::kAct), ErrorClass::kHalt);
  EXPECT_TRUE(AskedNodeNothing(done.status())) << "the pull failed before the install was asked";
  EXPECT_EQ(Snapshot("w-2").next_boot_slot, "");
}

}  // namespace
}  // namespace tr::reconciler::talos
