#include "reconciler/features/notify/discord_poster.h"

#include "base/http_client.h"
#include "nlohmann/json.hpp"
#include "reconciler/runtime/json_fields.h"

namespace tr::reconciler::notify {
namespace {

using std::chrono::milliseconds;

// `path` with `suffix` added to its path part and `param` to its query.
std::string WithPath(const std::string& path, const std::string& suffix, const std::string& param) {
  const size_t query = path.find('?');
  std::string out = path.substr(0, query) + suffix;
  std::string rest = query == std::string::npos ? "" : path.substr(query + 1);
  if (!param.empty()) rest += (rest.empty() ? "" : "&") + param;
  return rest.empty() ? out : out + "?" + rest;
}

// The wait a rate-limited answer asks for: its Retry-After header when usable, else the
// body's `retry_after` (Discord says it there too), else a second.
milliseconds RequestedWait(const CappedAnswer& answer, const HttpOutcome& outcome) {
  if (answer.result && !outcome.retry_after) {
    const auto body = nlohmann::json::parse(answer.result->body, nullptr, false);
    if (body.is_object() && body.contains("retry_after") && body["retry_after"].is_number()) {
      return milliseconds(static_cast<int64_t>(body["retry_after"].get<double>() * 1000));
    }
  }
  return RetryAfter(outcome, milliseconds(1000));
}

}  // namespace

PostOutcome DiscordPoster::Post(const Spooled& s) {
  const Env::TimePoint now = context_.env->Now();
  if (now < next_request_) {
    return PostOutcome::Wait(std::chrono::ceil<milliseconds>(next_request_ - now), "paced");
  }
  const std::optional<std::string> id = context_.ids->Find(s.rollout);
  const std::string method = id ? "PATCH" : "POST";
  const std::string path =
      id ? WithPath(target_.path, "/messages/" + *id, "") : WithPath(target_.path, "", "wait=true");
  const auto client = NewHttpClient(target_.origin, {context_.timeout, context_.timeout, {}});
  const CappedAnswer answer = SendCapped(*client, MakeRequest(method, path, {}, s.body, "application/json"),
                                         context_.max_answer_bytes);
  if (answer.result && answer.result->get_header_value("X-RateLimit-Remaining") == "0") {
    next_request_ = context_.env->Now() +
                    HeaderSeconds(answer.result, "X-RateLimit-Reset-After", milliseconds(1000));
  }
  const HttpOutcome outcome = OutcomeOf(answer);
  if (id && outcome.Code() == absl::StatusCode::kNotFound) {
    if (absl::Status forgot = context_.ids->Forget(s.rollout); !forgot.ok()) {
      return PostOutcome::Failed(std::string(forgot.message()));
    }
    return PostOutcome::Wait(milliseconds(0), "the message is gone, posting anew");
  }
  if (!outcome.Succeeded() || !answer.result) {
    return PostOutcome::NotDelivered(answer, method, RequestedWait(answer, outcome));
  }
  if (id) return PostOutcome::Sent();
  const auto message = nlohmann::json::parse(answer.result->body, nullptr, false);
  const std::string new_id = message.is_object() ? json_fields::Text(message, "id") : "";
  if (new_id.empty()) return PostOutcome::SentWithNote("the answer names no message id");
  if (absl::Status kept = context_.ids->Put(s.rollout, new_id); !kept.ok()) {
    return PostOutcome::SentWithNote("its id is not kept: " + std::string(kept.message()));
  }
  return PostOutcome::Sent();
}

}  // namespace tr::reconciler::notify
