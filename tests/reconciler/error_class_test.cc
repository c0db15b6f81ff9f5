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
      // Loading the repository or the status branch: a person must fix bad input, credentials
      // or corrupt data; anything else is retried.
      {absl::InvalidArgumentError("profiles: bad YAML"), kLoad, kStall},
      {absl::UnauthenticatedError("git: authentication required"), kLoad, kStall},
      {absl::PermissionDeniedError("git: denied"), kLoad, kStall},
      {absl::FailedPreconditionError("no such branch"), kLoad, kStall},
      {absl::DataLossError("git: corrupt object"), kLoad, kStall},
      {absl::InternalError("git: cannot lock ref"), kLoad, kRetry},
      {absl::NotFoundError("git: remote not found"), kLoad, kRetry},
      {absl::UnknownError("git: early EOF"), kLoad, kRetry},
      {absl::UnavailableError("git: connection refused"), kLoad, kRetry},
      // A forge call: retried while nothing answered, waited out when rate-limited (a 429, or a
      // 403 the forge says is a limit), otherwise stopped: the caller has the error.
      {absl::UnavailableError("forge GET /x: HTTP 502"), kCall, kRetry},
      {absl::DeadlineExceededError("forge GET /x: Read"), kCall, kRetry},
      {absl::ResourceExhaustedError("forge POST /x: HTTP 429"), kCall, kBusy},
      {absl::PermissionDeniedError("forge GET /x: HTTP 403 (forbidden)"), kCall, kStall},
      {absl::NotFoundError("forge GET /x: HTTP 404"), kCall, kStall},
      {absl::AbortedError("forge PATCH /x: HTTP 409"), kCall, kStall},
      // A notification delivery: a rate limit is waited out, anything else is a failed attempt.
      {absl::ResourceExhaustedError("HTTP 429"), kDeliver, kBusy},
      {absl::InvalidArgumentError("HTTP 400"), kDeliver, kRetry},
      {absl::InternalError("Could not establish connection"), kDeliver, kRetry},
  };
  for (const ClassCase& c : cases) {
    EXPECT_EQ(ErrorClassName(ClassifyError(c.error, c.source)),
              std::string(ErrorClassName(c.expected)))
        << c.error;
  }
}

// Every code has a class at every source, and a code the table does not hold reads as Unknown.
TEST(ErrorClassTest, EveryCodeHasAClassAtEverySource) {
  for (int code = 1; code <= 16; ++code) {
    const absl::Status error(static_cast<absl::StatusCode>(code), "x");
    const bool transient = absl::IsUnavailable(error) || absl::IsDeadlineExceeded(error) ||
                           absl::IsCancelled(error) || absl::IsAborted(error) ||
                           absl::IsResourceExhausted(error);
    EXPECT_EQ(ClassifyError(error, ErrorSource::kObserve),
              transient ? ErrorClass::kRetry : ErrorClass::kStall)
        << error;
    EXPECT_EQ(ClassifyError(error, ErrorSource::kAct),
              transient ? ErrorClass::kRetry : ErrorClass::kHalt)
        << error;
    EXPECT_EQ(ClassifyError(error, ErrorSource::kRecord), ErrorClass::kRetry) << error;
    EXPECT_EQ(ClassifyError(error, ErrorSource::kDeliver),
              absl::IsResourceExhausted(error) ? ErrorClass::kBusy : ErrorClass::kRetry)
        << error;
  }
  const absl::Status beyond(static_cast<absl::StatusCode>(40), "a code absl may add");
  for (ErrorSource source : {ErrorSource::kObserve, ErrorSource::kAct, ErrorSource::kRecord,
                             ErrorSource::kLoad, ErrorSource::kCall, ErrorSource::kDeliver}) {
    EXPECT_EQ(ClassifyError(beyond, source), ClassifyError(absl::UnknownError("x"), source));
  }
}

}  // namespace
}  // namespace tr::reconciler
