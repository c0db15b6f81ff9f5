// How one spooled delivery is sent to its receiver, as its format chooses
// (MessageFormat::NewPoster): a plain POST (signed when the target has a key) by default, or
// the format's own (Slack's Web API, a Discord webhook). The sender (webhook_notifier.h) keeps
// order, spool and retries; a poster makes one attempt and says what came of it.
//
// Thread-compatible: one receiver's sender uses its poster.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "base/env.h"
#include "reconciler/features/notify/message_ids.h"
#include "reconciler/features/notify/notify_target.h"
#include "reconciler/features/notify/spool.h"
#include "reconciler/runtime/capped_request.h"
#include "reconciler/runtime/error_class.h"

namespace tr::reconciler::notify {

struct PostOutcome {
  bool sent = true;
  // When not sent, what comes next, in the words of the one table of errors
  // (reconciler/runtime/error_class.h, ErrorSource::kDeliver):
  //   retry  a failed attempt: retried after the backoff, dropped after the last;
  //   busy   the receiver asked to wait (a rate limit, a pace) or the message must be posted
  //          anew: tried again after `wait`, and the attempt does not count.
  ErrorClass next = ErrorClass::kRetry;
  std::chrono::milliseconds wait{0};
  std::string error;  // for the log (sent: a note), never holding a secret

  bool FailedAttempt() const { return !sent && next != ErrorClass::kBusy; }
  bool Waits() const { return !sent && next == ErrorClass::kBusy; }

  static PostOutcome Sent() { return {}; }
  static PostOutcome SentWithNote(std::string note) {
    return {true, ErrorClass::kRetry, {}, std::move(note)};
  }
  static PostOutcome Failed(std::string why) {
    return {false, ErrorClass::kRetry, {}, std::move(why)};
  }
  static PostOutcome Wait(std::chrono::milliseconds wait, std::string why) {
    return {false, ErrorClass::kBusy, wait, std::move(why)};
  }
  // An answer that was no success, or none: what it means for the delivery by the table — a
  // rate limit waits `wait`, anything else is a failed attempt. The error reads `what` (when
  // not empty) and the answer: "chat.update: HTTP 503".
  static PostOutcome NotDelivered(const CappedAnswer& answer, const std::string& what,
                                  std::chrono::milliseconds wait);
};

struct PostContext {
  std::chrono::seconds timeout{10};  // connect, read and write
  size_t max_answer_bytes = kMiB;    // an answer is read no further
  Env* env = nullptr;                // time, for signatures and pacing
  MessageIds* ids = nullptr;         // the rollouts' messages (in-place formats)
};

class Poster {
 public:
  virtual ~Poster() = default;
  virtual PostOutcome Post(const Spooled& s) = 0;
};

// The longest wait a receiver may ask for.
inline constexpr std::chrono::minutes kMaxReceiverWait{10};

// Seconds (decimals allowed, base/http_outcome.h's ParseDelaySeconds) in the answer's header
// `name`, else `fallback`; at most kMaxReceiverWait.
std::chrono::milliseconds HeaderSeconds(const httplib::Result& result, const char* name,
                                        std::chrono::milliseconds fallback);
// The delay a rate-limited answer asks for: its Retry-After, else `fallback`; at most
// kMaxReceiverWait.
inline std::chrono::milliseconds RetryAfter(const HttpOutcome& outcome,
                                            std::chrono::milliseconds fallback) {
  return outcome.RetryAfterOr(fallback, kMaxReceiverWait);
}

// "HTTP 503" for an answer, httplib's error for none.
std::string DescribeAnswer(const CappedAnswer& answer);

}  // namespace tr::reconciler::notify
