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

ErrorClass ClassifyError(const absl::Status& status, ErrorSource source) {
  if (talos::InstallInProgress(status)) return ErrorClass::kBusy;
  if (absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status) ||
      absl::IsCancelled(status) || absl::IsAborted(status) ||
      absl::IsResourceExhausted(status)) {
    return ErrorClass::kRetry;
  }
  switch (source) {
    case ErrorSource::kObserve:
      return ErrorClass::kStall;
    case ErrorSource::kAct:
      return ErrorClass::kHalt;
    case ErrorSource::kRecord:
      return ErrorClass::kRetry;
  }
  return ErrorClass::kRetry;
}

}  // namespace tr::reconciler
