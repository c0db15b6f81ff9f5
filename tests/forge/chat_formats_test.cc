// The chat notification formats (teams, mattermost, googlechat): every event of a sample
// rollout checked with each tool's own published package (tests/forge/check_chat_payload.mjs),
// which must also refuse a broken body; what each card shows and how it is coloured;
// Google Chat's one thread per rollout and the query that makes Chat reply into it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "reconciler/features/notify/googlechat_format.h"
#include "reconciler/features/notify/message_format.h"
#include "reconciler/features/notify/notify_target.h"
#include "tests/notify_preview/sample_notification.h"
#include "tests/support/chat_payload_check.h"
#include "tests/support/process.h"

namespace tr::reconciler::notify {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kReply[] = "messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD";

Json Rendered(const std::string& format, const Notification& n) {
  return Json::parse(MessageFormatNamed(format)->Render(n, notify_preview::kSampleDeliveryId));
}

Notification Sample(NotificationEvent event) {
  for (const Notification& n : notify_preview::SampleRollout()) {
    if (n.event == event) return n;
  }
  ADD_FAILURE() << "no sample of event " << NotificationEventName(event);
  return {};
}

class ChatFormatTest : public ::testing::TestWithParam<std::string> {
 protected:
  gitsource::testing::TempDir dir_;
};

TEST_P(ChatFormatTest, EveryEventPassesTheToolsOwnChecker) {
  std::vector<std::string> bodies;
  for (const Notification& n : notify_preview::SampleRollout()) {
    bodies.push_back(MessageFormatNamed(GetParam())->Render(n, notify_preview::kSampleDeliveryId));
  }
  ASSERT_EQ(bodies.size(), 6u);
  const auto check = test_support::CheckChatPayloads(GetParam(), bodies, dir_.path());
  EXPECT_TRUE(check.passed) << check.output;
}

// The name of a field its tool does not know, and the body with it where the tool reads it.
std::pair<std::string, Json> Broken(const std::string& format, Json body) {
  if (format == "teams") {
    body["attachments"][0]["content"]["body"][0]["items"][0]["colour"] = "red";
    return {"colour", body};
  }
  if (format == "mattermost") {
    body["attachments"][0]["fields"][0]["shortish"] = true;
    return {"shortish", body};
  }
  Json& text = body["cardsV2"][0]["card"]["sections"][0]["widgets"][1]["decoratedText"];
  text["toplabel"] = text["topLabel"];
  text.erase("topLabel");
  return {"toplabel", body};
}

TEST_P(ChatFormatTest, TheCheckerRefusesAFieldTheToolDoesNotKnow) {
  const auto [field, body] =
      Broken(GetParam(), Rendered(GetParam(), notify_preview::SampleNotification()));
  const auto check = test_support::CheckChatPayloads(GetParam(), {body.dump()}, dir_.path());
  EXPECT_FALSE(check.passed);
  EXPECT_THAT(check.output, HasSubstr(field)) << check.output;
}

TEST_P(ChatFormatTest, TakesNoSecretAndKeepsOtherPathsAsConfigured) {
  EXPECT_FALSE(MessageFormatNamed(GetParam())->NeedsSecret());
  EXPECT_TRUE(ParseNotifyTarget("url=http://127.0.0.1:9/x,format=" + GetParam()).ok());
  EXPECT_FALSE(
      ParseNotifyTarget("url=http://127.0.0.1:9/x,format=" + GetParam() + ",secret-file=/dev/null")
          .ok());
  if (GetParam() != "googlechat") {
    EXPECT_EQ(MessageFormatNamed(GetParam())->Path("/x?a=1"), "/x?a=1");
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, ChatFormatTest,
                         ::testing::Values("teams", "mattermost", "googlechat"));

// The card's header container of `n`.
Json TeamsHeader(const Notification& n) {
  return Rendered("teams", n)["attachments"][0]["content"]["body"][0];
}

TEST(TeamsFormatTest, AnAdaptiveCardWithTheFactsColouredByEvent) {
  const Json body = Rendered("teams", notify_preview::SampleNotification());
  EXPECT_EQ(body["type"], "message");
  const Json& attachment = body["attachments"][0];
  EXPECT_EQ(attachment["contentType"], "application/vnd.microsoft.card.adaptive");
  const Json& card = attachment["content"];
  EXPECT_EQ(card["type"], "AdaptiveCard");
  EXPECT_EQ(card["version"], "1.4");
  EXPECT_EQ(card["body"][0]["items"][0]["text"], "prod-eu-1: node.upgraded");
  EXPECT_EQ(card["body"][1]["text"], "upgraded to Talos 1.12.0 in 6m12s");
  const Json& facts = card["body"][2]["facts"];
  EXPECT_THAT(facts, Contains(Json{{"title", "Talos"}, {"value", "1.11.6 → 1.12.0"}}));
  EXPECT_THAT(facts, Contains(Json{{"title", "Kubernetes"}, {"value", "1.35.0"}}));
  EXPECT_THAT(facts, Contains(Json{{"title", "Node"}, {"value", "w-0"}}));
  EXPECT_THAT(facts, Contains(Json{{"title", "Progress"}, {"value", "2/5"}}));
  EXPECT_THAT(facts, Contains(Json{{"title", "Commit"}, {"value", "9a1c7e2f64b0"}}));
  EXPECT_EQ(TeamsHeader(Sample(NotificationEvent::kRolloutStarted))["style"], "accent");
  EXPECT_EQ(TeamsHeader(Sample(NotificationEvent::kRolloutCompleted))["style"], "good");
  EXPECT_EQ(TeamsHeader(Sample(NotificationEvent::kRolloutBlocked))["style"], "warning");
  EXPECT_EQ(TeamsHeader(Sample(NotificationEvent::kRolloutFailed))["style"], "attention");
}

TEST(MattermostFormatTest, OneAttachmentColouredByEventWithAFallback) {
  const Json body = Rendered("mattermost", notify_preview::SampleNotification());
  EXPECT_EQ(body["username"], "talos-reconciler");
  const Json& attachment = body["attachments"][0];
  EXPECT_EQ(attachment["fallback"],
            "prod-eu-1 node.upgraded w-0 (Talos 1.12.0) 2/5: upgraded to Talos 1.12.0 in 6m12s");
  EXPECT_EQ(attachment["title"], "prod-eu-1: node.upgraded");
  EXPECT_EQ(attachment["text"], "upgraded to Talos 1.12.0 in 6m12s");
  EXPECT_THAT(attachment["fields"],
              Contains(Json{{"title", "Talos"}, {"value", "1.11.6 → 1.12.0"}, {"short", true}}));
  std::set<std::string> colours;
  for (const Notification& n : notify_preview::SampleRollout()) {
    colours.insert(Rendered("mattermost", n)["attachments"][0]["color"].get<std::string>());
  }
  // Started and node upgraded share blue; blocked and waiting share amber.
  EXPECT_EQ(colours, (std::set<std::string>{"#2F6FDB", "#1E9E5A", "#D98C1A", "#C8312B"}));
}

TEST(GoogleChatFormatTest, OneThreadPerRollout) {
  std::set<std::string> keys;
  for (const Notification& n : notify_preview::SampleRollout()) {
    keys.insert(Rendered("googlechat", n)["thread"]["threadKey"].get<std::string>());
  }
  EXPECT_EQ(keys, (std::set<std::string>{"talos-reconciler/prod-eu-1/"
                                         "9a1c7e2f64b0d5c3a8e1f7b2d9c4a6e0f3b5d8c1/"
                                         "talos-1.12.0/kubernetes-1.35.0"}));
  Notification next = notify_preview::SampleNotification();
  next.commit = "0b1e";
  EXPECT_NE(RolloutThreadKey(next), *keys.begin());
  next = notify_preview::SampleNotification();
  next.kubernetes_target = "1.36.0";
  EXPECT_NE(RolloutThreadKey(next), *keys.begin());
  const Json body = Rendered("googlechat", notify_preview::SampleNotification());
  EXPECT_THAT(body["text"].get<std::string>(), HasSubstr("*prod-eu-1* node.upgraded"));
  EXPECT_EQ(body["cardsV2"][0]["card"]["header"]["title"], "prod-eu-1: node.upgraded");
}

TEST(GoogleChatFormatTest, AsksChatToReplyInTheThread) {
  const auto format = MessageFormatNamed("googlechat");
  EXPECT_EQ(format->Path("/v1/spaces/AAAA/messages?key=k&token=t"),
            std::string("/v1/spaces/AAAA/messages?key=k&token=t&") + kReply);
  EXPECT_EQ(format->Path("/hook"), std::string("/hook?") + kReply);
  // One the URL sets already is kept (REPLY_MESSAGE_OR_FAIL, say).
  EXPECT_EQ(format->Path("/m?messageReplyOption=REPLY_MESSAGE_OR_FAIL"),
            "/m?messageReplyOption=REPLY_MESSAGE_OR_FAIL");
}

}  // namespace
}  // namespace tr::reconciler::notify
