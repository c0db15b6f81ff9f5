#include "reconciler/operations/error_class.h"

#include "reconciler/clients/talos/talos_answers.h"

namespace tr::reconciler {

ErrorClass ClassifyError(const absl::Status& status, ErrorSource source) {
  if (talos::InstallInProgress(status)) return ErrorClass::kBusy;
  return ClassOfCode(status.code(), source);
}

}  // namespace tr::reconciler
