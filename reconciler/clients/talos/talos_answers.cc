#include "reconciler/clients/talos/talos_answers.h"

#include <string_view>
#include <utility>

#include "absl/strings/cord.h"

namespace tr::reconciler::talos {
namespace {

// Payload type URLs (absl::Status::SetPayload); each payload's value is "1".
constexpr char kInstallInProgress[] = "talos-reconciler/talos-install-in-progress";
constexpr char kUpgradeMutexHeld[] = "talos-reconciler/talos-upgrade-mutex-held";
constexpr char kEveryEndpointRefused[] = "talos-reconciler/every-endpoint-refused";

bool TalosSays(const absl::Status& status, std::string_view words) {
  return std::string_view(status.message().data(), status.message().size()).find(words) !=
         std::string_view::npos;
}

absl::Status WithTalosPayload(absl::Status status, const char* payload) {
  status.SetPayload(payload, absl::Cord("1"));
  return status;
}

}  // namespace

absl::Status RecognizeTalosAnswer(absl::Status answer) {
  // Talos' words when an Upgrade is called while an install still runs.
  if (absl::IsFailedPrecondition(answer) && TalosSays(answer, "already in progress")) {
    return WithTalosPayload(std::move(answer), kInstallInProgress);
  }
  if (absl::IsUnknown(answer) && TalosSays(answer, "failed to acquire upgrade mutex")) {
    return WithTalosPayload(std::move(answer), kUpgradeMutexHeld);
  }
  return answer;
}

bool InstallInProgress(const absl::Status& status) {
  return status.GetPayload(kInstallInProgress).has_value();
}

bool UpgradeMutexHeld(const absl::Status& status) {
  return status.GetPayload(kUpgradeMutexHeld).has_value();
}

bool EveryEndpointRefused(const absl::Status& status) {
  return status.GetPayload(kEveryEndpointRefused).has_value();
}

absl::Status MarkEveryEndpointRefused(absl::Status status) {
  return WithTalosPayload(std::move(status), kEveryEndpointRefused);
}

}  // namespace tr::reconciler::talos
