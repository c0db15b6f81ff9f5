#include "base/http_outcome.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace tr {

std::optional<std::chrono::milliseconds> ParseDelaySeconds(std::string_view value,
                                                           std::chrono::milliseconds max) {
  const std::string text(value);
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(seconds >= 0)) return std::nullopt;  // NaN too
  // Clamped in seconds first: a huge value must not overflow on the way to milliseconds.
  const double max_seconds = static_cast<double>(max.count()) / 1000;
  return std::chrono::milliseconds(static_cast<int64_t>(std::min(seconds, max_seconds) * 1000));
}

HttpOutcome HttpOutcome::Of(int status, std::string_view retry_after) {
  HttpOutcome outcome;
  outcome.status = status;
  if (!retry_after.empty()) outcome.retry_after = ParseDelaySeconds(retry_after, kMaxRetryAfter);
  return outcome;
}

HttpOutcome HttpOutcome::Of(int status, const httplib::Headers& headers) {
  const auto it = headers.find("Retry-After");  // httplib compares header names ignoring case
  return Of(status, it == headers.end() ? std::string_view() : std::string_view(it->second));
}

absl::StatusCode HttpOutcome::Code() const {
  if (Succeeded()) return absl::StatusCode::kOk;
  switch (status) {
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      return absl::StatusCode::kAborted;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    default:
      break;
  }
  if (ServerTrouble()) return absl::StatusCode::kUnavailable;
  if (status >= 400 && status < 500) return absl::StatusCode::kInvalidArgument;
  return absl::StatusCode::kInternal;
}

absl::Status HttpOutcome::Error(std::string message) const {
  const absl::StatusCode code = Code();
  if (code == absl::StatusCode::kOk) return absl::OkStatus();
  return absl::Status(code, std::move(message));
}

std::chrono::milliseconds HttpOutcome::RetryAfterOr(std::chrono::milliseconds fallback,
                                                    std::chrono::milliseconds max) const {
  return retry_after ? std::min(*retry_after, max) : fallback;
}

}  // namespace tr
