#include "reconciler/runtime/error_class.h"

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
  ErrorClass observe, act, record, load, call, deliver;
};

// The class of each canonical code at each source: the one table that answers "retry, wait or
// stop". Nothing answered, or a deadline or rate limit of a call: retry, wherever it arose,
// except that a rate limit keeps a call or a delivery busy (it waits as asked). Otherwise
// observing stalls, acting halts, recording retries, loading stalls on what needs a person (bad
// input or credentials, corrupt data) and retries the rest, a call stops (its caller has the
// error) and a delivery retries. A code outside it (OK, or one absl may add) is read as Unknown.
const CodeRow& RowOf(absl::StatusCode code) {
  using enum absl::StatusCode;
  using enum ErrorClass;
  // clang-format off
  static constexpr CodeRow kTable[] = {
      // code               observe  act     record  load    call    deliver
      {kUnknown,            kStall,  kHalt,  kRetry, kRetry, kStall, kRetry},
      {kCancelled,          kRetry,  kRetry, kRetry, kRetry, kStall, kRetry},
      {kInvalidArgument,    kStall,  kHalt,  kRetry, kStall, kStall, kRetry},
      {kDeadlineExceeded,   kRetry,  kRetry, kRetry, kRetry, kRetry, kRetry},
      {kNotFound,           kStall,  kHalt,  kRetry, kRetry, kStall, kRetry},
      {kAlreadyExists,      kStall,  kHalt,  kRetry, kRetry, kStall, kRetry},
      {kPermissionDenied,   kStall,  kHalt,  kRetry, kStall, kStall, kRetry},
      {kResourceExhausted,  kRetry,  kRetry, kRetry, kRetry, kBusy,  kBusy},
      {kFailedPrecondition, kStall,  kHalt,  kRetry, kStall, kStall, kRetry},
      {kAborted,            kRetry,  kRetry, kRetry, kRetry, kStall, kRetry},
      {kOutOfRange,         kStall,  kHalt,  kRetry, kRetry, kStall, kRetry},
      {kUnimplemented,      kStall,  kHalt,  kRetry, kRetry, kStall, kRetry},
      {kInternal,           kStall,  kHalt,  kRetry, kRetry, kStall, kRetry},
      {kUnavailable,        kRetry,  kRetry, kRetry, kRetry, kRetry, kRetry},
      {kDataLoss,           kStall,  kHalt,  kRetry, kStall, kStall, kRetry},
      {kUnauthenticated,    kStall,  kHalt,  kRetry, kStall, kStall, kRetry},
  };
  // clang-format on
  for (const CodeRow& row : kTable) {
    if (row.code == code) return row;
  }
  return kTable[0];
}

}  // namespace

ErrorClass ClassOfCode(absl::StatusCode code, ErrorSource source) {
  const CodeRow& row = RowOf(code);
  switch (source) {
    case ErrorSource::kObserve:
      return row.observe;
    case ErrorSource::kAct:
      return row.act;
    case ErrorSource::kRecord:
      return row.record;
    case ErrorSource::kLoad:
      return row.load;
    case ErrorSource::kCall:
      return row.call;
    case ErrorSource::kDeliver:
      return row.deliver;
  }
  return ErrorClass::kRetry;
}

}  // namespace tr::reconciler
