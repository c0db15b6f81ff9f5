// The Talos answers told apart by their words are recognised where they arrive, and the status
// keeps Talos' code and message.
#include "reconciler/clients/talos/talos_answers.h"

#include <gtest/gtest.h>

namespace tr::reconciler::talos {
namespace {

TEST(TalosAnswersTest, AnInstallStillRunningIsMarkedAndKeepsItsWords) {
  const absl::Status answer = RecognizeTalosAnswer(absl::FailedPreconditionError(
      "talos LifecycleUpgrade on node 10.0.0.4: another installation/upgrade is already in "
      "progress"));
  EXPECT_TRUE(InstallInProgress(answer));
  EXPECT_FALSE(UpgradeMutexHeld(answer));
  EXPECT_EQ(answer.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(answer.message(),
            "talos LifecycleUpgrade on node 10.0.0.4: another installation/upgrade is already in "
            "progress");
}

TEST(TalosAnswersTest, AHeldUpgradeMutexIsMarkedAndKeepsItsCode) {
  const absl::Status answer = RecognizeTalosAnswer(absl::UnknownError(
      "failed to acquire upgrade mutex: error trying to lock etcd upgrade mutex: mutex: Locked "
      "by another session"));
  EXPECT_TRUE(UpgradeMutexHeld(answer));
  EXPECT_FALSE(InstallInProgress(answer));
  EXPECT_EQ(answer.code(), absl::StatusCode::kUnknown);
}

TEST(TalosAnswersTest, TheWordsMeanNothingUnderAnotherCode) {
  EXPECT_FALSE(InstallInProgress(RecognizeTalosAnswer(absl::UnknownError("already in progress"))));
  EXPECT_FALSE(UpgradeMutexHeld(
      RecognizeTalosAnswer(absl::UnavailableError("failed to acquire upgrade mutex"))));
  const absl::Status other = RecognizeTalosAnswer(absl::UnknownError("installer exited"));
  EXPECT_FALSE(InstallInProgress(other) || UpgradeMutexHeld(other) || EveryEndpointRefused(other));
  EXPECT_EQ(other, absl::UnknownError("installer exited"));
}

TEST(TalosAnswersTest, EveryEndpointRefusedIsAMarkNotAMessage) {
  const absl::Status unmarked = absl::UnavailableError("no endpoint reachable (tried a, b)");
  EXPECT_FALSE(EveryEndpointRefused(unmarked));
  const absl::Status marked = MarkEveryEndpointRefused(unmarked);
  EXPECT_TRUE(EveryEndpointRefused(marked));
  EXPECT_EQ(marked.message(), unmarked.message());
}

}  // namespace
}  // namespace tr::reconciler::talos
