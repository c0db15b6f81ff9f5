// A 1.14 node whose configuration holds the 1.14 documents, asked to install a 1.13 installer
// (talos-sim): the installer refuses the configuration and exits 1, which the client reports
// in the installer's words as a refusal that halts the rollout.
#include <gmock/gmock.h>

#include "reconciler/operations/error_class.h"
#include "tests/support/sim_fixture.h"

namespace tr::reconciler::talos {
namespace {

using ::testing::HasSubstr;

constexpr char kOlderInstaller[] = "ghcr.io/siderolabs/installer:v1.13.9";

class DowngradeRefusalTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("v1.14.0", "v1.14.0")));
    ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client_));
  }
  std::unique_ptr<TalosClient> client_;
};

TEST_F(DowngradeRefusalTest, TheClientReportsTheInstallersWords) {
  const std::string w1 = Address("w-1");
  ASSERT_TRUE(client_->PullImage(w1, core::InstallerStore::kSystem, kOlderInstaller).ok());
  auto installed =
      client_->LifecycleUpgrade(w1, kOlderInstaller, core::InstallerStore::kSystem, {});
  EXPECT_EQ(installed.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string message(installed.status().message());
  EXPECT_THAT(message, HasSubstr("installer exited with code 1: error loading machine "
                                 "configuration: error decoding document v1alpha1/"));
  EXPECT_THAT(message, HasSubstr("\"v1alpha1\": not registered"));
  EXPECT_EQ(ClassifyError(installed.status(), ErrorSource::kAct), ErrorClass::kHalt);
  EXPECT_EQ(Snapshot("w-1").next_boot_slot, "");
  EXPECT_EQ(Snapshot("w-1").talos_tag, "v1.14.0");
}

}  // namespace
}  // namespace tr::reconciler::talos
