#include "reconciler/features/notify/poster.h"

#include "base/http_client.h"
#include "reconciler/features/notify/standard_webhooks.h"

namespace tr::reconciler::notify {
namespace {

using std::chrono::milliseconds;

// Each delivery POSTed to the target's URL, signed as Standard Webhooks specify when the
// target has a key; any 2xx is sent, a rate limit waits as asked.
class HookPoster final : public Poster {
 public:
  HookPoster(const NotifyTarget& target, const PostContext& context)
      : target_(target), context_(context) {}

  PostOutcome Post(const Spooled& s) override {
    const auto client = NewHttpClient(target_.origin, {context_.timeout, context_.timeout, {}});
    httplib::Headers headers;
    if (!target_.signing_key.empty()) {
      const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                              context_.env->Now().time_since_epoch())
                              .count();
      for (auto& [name, value] :
           StandardWebhookHeaders(target_.signing_key, s.delivery, now, s.body)) {
        headers.emplace(std::move(name), std::move(value));
      }
    }
    const CappedAnswer answer =
        SendCapped(*client, MakeRequest("POST", target_.format->Path(target_.path), headers, s.body,
                                "application/json"),
                   context_.max_answer_bytes);
    const HttpOutcome outcome = OutcomeOf(answer);
    if (outcome.Succeeded()) return PostOutcome::Sent();
    return PostOutcome::NotDelivered(answer, "", RetryAfter(outcome, milliseconds(1000)));
  }

 private:
  const NotifyTarget& target_;
  const PostContext context_;
};

}  // namespace

std::unique_ptr<Poster> MessageFormat::NewPoster(const NotifyTarget& target,
                                                 const PostContext& context) const {
  return std::make_unique<HookPoster>(target, context);
}

PostOutcome PostOutcome::NotDelivered(const CappedAnswer& answer, const std::string& what,
                                      milliseconds wait) {
  std::string error = what.empty() ? DescribeAnswer(answer) : what + ": " + DescribeAnswer(answer);
  switch (ClassOfCode(OutcomeOf(answer).Code(), ErrorSource::kDeliver)) {
    case ErrorClass::kBusy:
      return Wait(wait, std::move(error));
    case ErrorClass::kRetry:
    case ErrorClass::kHalt:
    case ErrorClass::kStall:
      break;
  }
  return Failed(std::move(error));
}

milliseconds HeaderSeconds(const httplib::Result& result, const char* name, milliseconds fallback) {
  if (!result || !result->has_header(name)) return fallback;
  return ParseDelaySeconds(result->get_header_value(name), kMaxReceiverWait).value_or(fallback);
}

std::string DescribeAnswer(const CappedAnswer& answer) {
  if (answer.status > 0) return "HTTP " + std::to_string(answer.status);
  return httplib::to_string(answer.result.error());
}

}  // namespace tr::reconciler::notify
