#include "reconciler/operations/error_class.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "reconciler/clients/talos/talos_answers.h"

namespace tr::reconciler {
namespace {

struct ClassCase {
  absl::Status error;
  ErrorSource source;
  ErrorClass expected;
};

TEST(ErrorClassTest, EachErrorHasOneClass) {
  using enum ErrorSource;
  using enum ErrorClass;
  const std::vector<ClassCase> cases = {
      // Retry with backoff: nothing answered, or a deadline or rate limit of a call.
      {absl::UnavailableError("connection refused"), kObserve, kRetry},
      {absl::UnavailableError("connection closed: node is rebooting"), kAct, kRetry},
      {absl::DeadlineExceededError("talos Version on node 10.0.0.4: deadline"), kAct, kRetry},
      {absl::CancelledError("stopping"), kAct, kRetry},
      {absl::AbortedError("status push rejected"), kRecord, kRetry},
      {absl::ResourceExhaustedError("kube: 429 too many requests"), kObserve, kRetry},
      {absl::InternalError("git: cannot lock ref"), kRecord, kRetry},
      // Busy: the node still runs an install it was given earlier.
      {talos::RecognizeTalosAnswer(absl::FailedPreconditionError(
           "talos LifecycleUpgrade on node 10.0.0.4 via 10.0.0.1:50000: another "
           "installation/upgrade is already in progress")),
       kAct, kBusy},
      // The same words not marked by the Talos adapter are not read: the code decides.
      {absl::FailedPreconditionError("something already in progress"), kAct, kHalt},
      // Halt: the node or the cluster refused a step of the upgrade.
      {absl::UnknownError("error validating installer image \"x\": not found"), kAct, kHalt},
      {absl::FailedPreconditionError("installer exited with code 1"), kAct, kHalt},
      {absl::FailedPreconditionError("drain of w-0 timed out after 300s: 1 pod(s) left"), kAct,
       kHalt},
      {absl::PermissionDeniedError("not authorized"), kAct, kHalt},
      {absl::UnimplementedError("unknown service machine.LifecycleService"), kAct, kHalt},
      // Stall: observing cannot work until the input (credentials, profile) changes.
      {absl::FailedPreconditionError("credentials prod: cannot read talosconfig"), kObserve,
       kStall},
      {absl::PermissionDeniedError("os:reader may not read"), kObserve, kStall},
  };
  for (const ClassCase& c : cases) {
    EXPECT_EQ(ErrorClassName(ClassifyError(c.error, c.source)),
              std::string(ErrorClassName(c.expected)))
        << c.error;
  }
}

}  // namespace
}  // namespace tr::reconciler
