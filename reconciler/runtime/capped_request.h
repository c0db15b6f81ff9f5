// One outbound HTTP request whose answer is read up to a cap, for every client the reconciler
// has (forge, registry, Kubernetes, notifications, health-gate probes): an answer is untrusted
// input, and a server that sends gigabytes must not take the process's memory with it.
// Reading stops at the cap — at once when Content-Length says more, else as soon as the bytes
// received pass it — and the connection is closed; nothing past the cap is buffered.
//
// Thread-safety: as the httplib client passed in.
#pragma once

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"
#include "base/http_outcome.h"
#include "httplib.h"

namespace tr::reconciler {

inline constexpr size_t kMiB = size_t{1} << 20;

struct CappedAnswer {
  // The answer, its body complete and at most the cap long; or httplib's error. When the
  // body was longer than the cap, an error (httplib's Canceled) and `over_cap` is set.
  httplib::Result result;
  bool over_cap = false;
  int status = -1;  // the answer's HTTP status once its head was read, over the cap too
};

// What the answer means (base/http_outcome.h): its status, and its Retry-After once read.
HttpOutcome OutcomeOf(const CappedAnswer& answer);

// Sends `request` (method, path, headers, body; a body's Content-Type in its headers) on
// `client`, with the client's own settings (timeouts, auth, TLS), and reads at most
// `max_answer_bytes` of the answer's body.
CappedAnswer SendCapped(httplib::Client& client, httplib::Request request, size_t max_answer_bytes);
CappedAnswer SendCapped(httplib::ClientImpl& client, httplib::Request request,
                        size_t max_answer_bytes);

// A request of `method` on `path` with `headers`, and `body` typed `content_type` when the
// body is not empty; with our User-Agent (base/http_client.h) unless `headers` name one.
httplib::Request MakeRequest(std::string method, std::string path, httplib::Headers headers = {},
                             std::string body = "", std::string_view content_type = "");

// ResourceExhausted naming what was asked and the cap: "<what>: the answer is larger than the
// cap of 8388608 bytes (8 MiB)" (the MiB only for a whole number of them).
absl::Status AnswerOverCap(std::string_view what, size_t max_answer_bytes);

}  // namespace tr::reconciler
