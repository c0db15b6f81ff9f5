// What an HTTP answer means to the client that asked, read in this one place for every HTTP
// client (forge, registry, Kubernetes, Image Factory, notification receivers): the canonical
// code its status stands for, whether it is a success, a rate limit or the server's trouble,
// and the delay its Retry-After header asks for. A client adds only what its own protocol
// says beyond HTTP (a forge's 403 that names a rate limit, Kubernetes' AlreadyExists).
//
// Pure; thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "httplib.h"

namespace tr {

// A header's number of seconds ("120"; decimals, which some servers send, too) as a delay of
// at most `max`. None for anything else: an HTTP-date, a negative number, no number.
std::optional<std::chrono::milliseconds> ParseDelaySeconds(std::string_view value,
                                                           std::chrono::milliseconds max);

struct HttpOutcome {
  int status = 0;
  // The delay the Retry-After header asks for (ParseDelaySeconds, at most kMaxRetryAfter).
  std::optional<std::chrono::milliseconds> retry_after;

  // The longest Retry-After kept; each client clamps further to what it will wait.
  static constexpr std::chrono::hours kMaxRetryAfter{24};

  // The outcome of an answer with `status` and a Retry-After header of `retry_after` ("" when
  // it had none), or with `headers`.
  static HttpOutcome Of(int status, std::string_view retry_after = "");
  static HttpOutcome Of(int status, const httplib::Headers& headers);

  bool Succeeded() const { return status >= 200 && status < 300; }  // any 2xx
  // 200 itself, not any 2xx: the answer that carries a page (a registry's) or an API's reply
  // (Slack's Web API).
  bool Ok200() const { return status == 200; }
  bool Redirected() const { return status >= 300 && status < 400; }  // any 3xx
  bool RateLimited() const { return status == 429; }                // Too Many Requests
  // 410 Gone: Kubernetes' Expired (a watch, or a list's continue token, too old to go on).
  bool Gone() const { return status == 410; }
  bool ServerTrouble() const { return status >= 500 && status < 600; }

  // What the answer means to the caller: OK for 2xx; Unauthenticated 401, PermissionDenied
  // 403, NotFound 404, Aborted 409 (a conflict: read again and retry), ResourceExhausted 429
  // and Unavailable 5xx (both: retry later), InvalidArgument for another 4xx (the request is
  // wrong; the same request fails again), Internal otherwise (a redirect, which no client
  // follows, or a code HTTP does not define).
  absl::StatusCode Code() const;
  // A status of Code() with `message`; OK for 2xx.
  absl::Status Error(std::string message) const;

  // The wait Retry-After asks for, at most `max`; `fallback` when it asked none.
  std::chrono::milliseconds RetryAfterOr(std::chrono::milliseconds fallback,
                                         std::chrono::milliseconds max) const;
};

}  // namespace tr
