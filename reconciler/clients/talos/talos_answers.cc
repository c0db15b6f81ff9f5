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
constexpr char kApidCouldNotDial[] = "talos-reconciler/apid-could-not-dial";  // the host

bool TalosSays(const absl::Status& status, std::string_view words) {
  return std::string_view(status.message().data(), status.message().size()).find(words) !=
         std::string_view::npos;
}

// "... transport: Error while dialing: dial tcp HOST:PORT: ..." (HOST bracketed when IPv6; older
// grpc-go wrote no colon after "dialing"), Unavailable.
std::optional<std::string> DialedHost(const absl::Status& status) {
  constexpr std::string_view kDialing = "transport: Error while dialing";
  constexpr std::string_view kTcp = "dial tcp ";
  const std::string_view message(status.message().data(), status.message().size());
  const size_t at = message.find(kDialing);
  if (!absl::IsUnavailable(status) || at == std::string_view::npos) return std::nullopt;
  std::string_view address = message.substr(at + kDialing.size());
  if (address.starts_with(':')) address.remove_prefix(1);
  if (address.starts_with(' ')) address.remove_prefix(1);
  if (!address.starts_with(kTcp)) return std::nullopt;
  address.remove_prefix(kTcp.size());
  address = address.substr(0, address.find_first_of(" \"\\"));
  if (address.ends_with(':')) address.remove_suffix(1);  // "...:50000: connect: ..."
  const size_t port = address.rfind(':');
  if (port == std::string_view::npos || port == 0) return std::nullopt;
  std::string_view host = address.substr(0, port);
  if (host.starts_with('[') && host.ends_with(']')) host = host.substr(1, host.size() - 2);
  return std::string(host);
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
  if (std::optional<std::string> host = DialedHost(answer)) {
    answer.SetPayload(kApidCouldNotDial, absl::Cord(*host));
  }
  return answer;
}

bool InstallInProgress(const absl::Status& status) {
  return status.GetPayload(kInstallInProgress).has_value();
}

bool UpgradeMutexHeld(const absl::Status& status) {
  return status.GetPayload(kUpgradeMutexHeld).has_value();
}

std::optional<std::string> HostApidCouldNotDial(const absl::Status& status) {
  const auto host = status.GetPayload(kApidCouldNotDial);
  if (!host) return std::nullopt;
  return std::string(*host);
}

bool EveryEndpointRefused(const absl::Status& status) {
  return status.GetPayload(kEveryEndpointRefused).has_value();
}

absl::Status MarkEveryEndpointRefused(absl::Status status) {
  return WithTalosPayload(std::move(status), kEveryEndpointRefused);
}

}  // namespace tr::reconciler::talos
