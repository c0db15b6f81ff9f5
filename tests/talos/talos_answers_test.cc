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

TEST(TalosAnswersTest, TheHostApidCouldNotDialIsReadFromItsUnavailable) {
  const std::string words =
      "connection error: desc = \"transport: Error while dialing: dial tcp 10.5.0.3:50000: "
      "connect: connection refused\"";
  const absl::Status answer = RecognizeTalosAnswer(absl::UnavailableError(words));
  EXPECT_EQ(HostApidCouldNotDial(answer), "10.5.0.3");
  EXPECT_EQ(answer.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(answer.message(), words);
  EXPECT_EQ(HostApidCouldNotDial(RecognizeTalosAnswer(absl::UnavailableError(
                "talos Read on node fd00::3 via [fd00::1]:50000: connection error: desc = "
                "\"transport: Error while dialing: dial tcp [fd00::3]:50000: i/o timeout\""))),
            "fd00::3");
  EXPECT_EQ(HostApidCouldNotDial(RecognizeTalosAnswer(absl::UnavailableError(
                "connection error: desc = \"transport: Error while dialing dial tcp "
                "10.5.0.4:50000: connect: connection refused\""))),
            "10.5.0.4");  // older grpc-go
  EXPECT_EQ(HostApidCouldNotDial(RecognizeTalosAnswer(absl::UnavailableError(
                "connection error: desc = \"transport: Error while dialing: dial tcp: lookup "
                "node-3: no such host\""))),
            std::nullopt);
  EXPECT_EQ(HostApidCouldNotDial(RecognizeTalosAnswer(absl::UnknownError(words))), std::nullopt);
  // apid's own node is dialed over a unix socket; the client's own gRPC words a connection it
  // could not make otherwise: neither names a host.
  EXPECT_EQ(HostApidCouldNotDial(RecognizeTalosAnswer(absl::UnavailableError(
                "connection error: desc = \"transport: Error while dialing: dial unix "
                "/system/run/machined/machine.sock: connect: no such file or directory\""))),
            std::nullopt);
  EXPECT_EQ(HostApidCouldNotDial(RecognizeTalosAnswer(absl::UnavailableError(
                "failed to connect to all addresses; last error: UNAVAILABLE: "
                "ipv4:127.0.0.1:50000: Connection refused"))),
            std::nullopt);
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
