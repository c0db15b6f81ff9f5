// How the reconciler answers an error of a cluster's reconcile (observing, acting, recording,
// loading): the one table of reconciler/runtime/error_class.h, and the payloads the Talos
// adapter marks (talos_answers.h). Talos' "another installation/upgrade is already in
// progress" (e.g. an install a killed process started) is busy wherever it arose.
//
// Pure; thread-safe.
#pragma once

#include "absl/status/status.h"
#include "reconciler/runtime/error_class.h"

namespace tr::reconciler {

// The class of a non-OK `status` that arose at `source`.
ErrorClass ClassifyError(const absl::Status& status, ErrorSource source);

}  // namespace tr::reconciler
