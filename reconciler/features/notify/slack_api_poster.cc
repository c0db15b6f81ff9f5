#include "reconciler/features/notify/slack_api_poster.h"

#include "base/http_client.h"
#include "nlohmann/json.hpp"
#include "reconciler/runtime/json_fields.h"

namespace tr::reconciler::notify {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kPostInterval{1000};

bool MessageGone(const std::string& error) {
  return error == "message_not_found" || error == "cant_update_message" ||
         error == "edit_window_closed";
}

std::string WithoutTrailingSlash(std::string path) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path;
}

}  // namespace

PostOutcome SlackApiPoster::Post(const Spooled& s) {
  nlohmann::json call = nlohmann::json::parse(s.body, nullptr, /*allow_exceptions=*/false);
  if (!call.is_object()) return PostOutcome::Failed("the spooled body is not a JSON object");
  call["channel"] = target_.channel;
  const std::optional<std::string> ts = context_.ids->Find(s.rollout);
  std::string method = "chat.postMessage";
  if (s.reply) {
    if (ts) call["thread_ts"] = *ts;
  } else if (ts) {
    method = "chat.update";
    call["ts"] = *ts;
  }
  const Env::TimePoint now = context_.env->Now();
  if (method == "chat.postMessage" && now < next_post_) {
    return PostOutcome::Wait(std::chrono::ceil<milliseconds>(next_post_ - now), "paced");
  }

  const auto client = NewHttpClient(target_.origin, {context_.timeout, context_.timeout, {}});
  const httplib::Headers headers{{"Authorization", "Bearer " + target_.bot_token}};
  const CappedAnswer answer = SendCapped(
      *client,
      MakeRequest("POST", WithoutTrailingSlash(target_.path) + "/" + method, headers,
                  call.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                  "application/json; charset=utf-8"),
      context_.max_answer_bytes);
  const HttpOutcome outcome = OutcomeOf(answer);
  if (!outcome.Ok200() || !answer.result) {
    return PostOutcome::NotDelivered(answer, method, RetryAfter(outcome, milliseconds(1000)));
  }

  const auto reply = nlohmann::json::parse(answer.result->body, nullptr, false);
  if (!reply.is_object()) return PostOutcome::Failed(method + ": the answer is not JSON");
  if (reply.value("ok", false) != true) {
    const std::string error = json_fields::Text(reply, "error");
    if (method == "chat.update" && MessageGone(error)) {
      if (absl::Status forgot = context_.ids->Forget(s.rollout); !forgot.ok()) {
        return PostOutcome::Failed(std::string(forgot.message()));
      }
      return PostOutcome::Wait(milliseconds(0), method + ": " + error + ", posting anew");
    }
    return PostOutcome::Failed(method + ": " + (error.empty() ? "ok is false" : error));
  }
  if (method == "chat.postMessage") next_post_ = context_.env->Now() + kPostInterval;
  if (method == "chat.postMessage" && !s.reply) {
    const std::string new_ts = json_fields::Text(reply, "ts");
    if (new_ts.empty()) return PostOutcome::Failed(method + ": the answer has no ts");
    if (absl::Status kept = context_.ids->Put(s.rollout, new_ts); !kept.ok()) {
      // Posted, but not remembered: sending it again would post a second message at once.
      return PostOutcome::SentWithNote("its ts is not kept: " + std::string(kept.message()));
    }
  }
  return PostOutcome::Sent();
}

}  // namespace tr::reconciler::notify
