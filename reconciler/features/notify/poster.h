// How one spooled delivery is sent to its receiver, per Transport (message_format.h): a plain
// POST (signed when the target has a key), Slack's Web API, or a Discord webhook. The sender
// (webhook_notifier.h) keeps order, spool and retries; a poster makes one attempt and says
// what came of it.
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

namespace tr::reconciler::notify {

struct PostOutcome {
  enum class Kind {
    kSent,
    kFailed,  // counts as an attempt: retried after the backoff, dropped after the last
    kWait,    // the receiver asked to wait (rate limit) or the message must be posted anew:
              // tried again after `wait`, and the attempt does not count
  };
  Kind kind = Kind::kSent;
  std::chrono::milliseconds wait{0};
  std::string error;  // for the log (kSent: a note), never holding a secret

  static PostOutcome Sent() { return {}; }
  static PostOutcome SentWithNote(std::string note) { return {Kind::kSent, {}, std::move(note)}; }
  static PostOutcome Failed(std::string why) { return {Kind::kFailed, {}, std::move(why)}; }
  static PostOutcome Wait(std::chrono::milliseconds wait, std::string why) {
    return {Kind::kWait, wait, std::move(why)};
  }
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

// The poster of `target`'s format. `target` and everything `context` points to outlive it.
std::unique_ptr<Poster> MakePoster(const NotifyTarget& target, const PostContext& context);

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
