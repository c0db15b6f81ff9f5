#include "reconciler/operations/error_class.h"

#include "reconciler/clients/talos/talos_answers.h"

namespace tr::reconciler {

const char* ErrorClassName(ErrorClass error_class) {
  switch (error_class) {
    case ErrorClass::kRetry:
      return "retry";
    case ErrorClass::kBusy:
      return "busy";
    case ErrorClass::kHalt:
      return "halt";
    case ErrorClass::kStall:
      return "stall";
  }
  return "unknown";
}

namespace {

struct CodeRow {
  absl::StatusCode code;
  ErrorClass observe, act, record, load;
};

// The class of each canonical code at each source: the one table that answers "retry, or not"
// for the observer, the executor, the status writer and the source poller. Nothing answered, or
// a deadline or rate limit of a call: retry, wherever it arose. Otherwise observing stalls,
// acting halts, recording retries, and loading stalls on what needs a person (bad input or
// credentials, corrupt data) and retries the rest. A code outside it (OK, or one absl may add)
// is read as Unknown.
const CodeRow& RowOf(absl::StatusCode code) {
  using enum absl::StatusCode;
  using enum ErrorClass;
  // clang-format off
  static constexpr CodeRow kTable[] = {
      // code               observe  act     record  load
      {kUnknown,            kStall,  kHalt,  kRetry, kRetry},
      {kCancelled,          kRetry,  kRetry, kRetry, kRetry},
      {kInvalidArgument,    kStall,  kHalt,  kRetry, kStall},
      {kDeadlineExceeded,   kRetry,  kRetry, kRetry, kRetry},
      {kNotFound,           kStall,  kHalt,  kRetry, kRetry},
      {kAlreadyExists,      kStall,  kHalt,  kRetry, kRetry},
      {kPermissionDenied,   kStall,  kHalt,  kRetry, kStall},
      {kResourceExhausted,  kRetry,  kRetry, kRetry, kRetry},
      {kFailedPrecondition, kStall,  kHalt,  kRetry, kStall},
      {kAborted,            kRetry,  kRetry, kRetry, kRetry},
      {kOutOfRange,         kStall,  kHalt,  kRetry, kRetry},
      {kUnimplemented,      kStall,  kHalt,  kRetry, kRetry},
      {kInternal,           kStall,  kHalt,  kRetry, kRetry},
      {kUnavailable,        kRetry,  kRetry, kRetry, kRetry},
      {kDataLoss,           kStall,  kHalt,  kRetry, kStall},
      {kUnauthenticated,    kStall,  kHalt,  kRetry, kStall},
  };
  // clang-format on
  for (const CodeRow& row : kTable) {
    if (row.code == code) return row;
  }
  return kTable[0];
}

}  // namespace

ErrorClass ClassifyError(const absl::Status& status, ErrorSource source) {
  if (talos::InstallInProgress(status)) return ErrorClass::kBusy;
  const CodeRow& row = RowOf(status.code());
  switch (source) {
    case ErrorSource::kObserve:
      return row.observe;
    case ErrorSource::kAct:
      return row.act;
    case ErrorSource::kRecord:
      return row.record;
    case ErrorSource::kLoad:
      return row.load;
  }
  return ErrorClass::kRetry;
}

}  // namespace tr::reconciler
