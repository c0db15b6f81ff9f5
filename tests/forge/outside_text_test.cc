// Text from outside (a health check's answer quoted in a status message) reaches no chat as
// markup: in every format a message carrying a Slack broadcast, a masked link in both syntaxes
// and mentions arrives inert.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/inert_text.h"
#include "nlohmann/json.hpp"
#include "reconciler/features/notify/message_format.h"
#include "tests/notify_preview/sample_notification.h"

namespace tr::reconciler::notify {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kHostile[] =
    "gate answered 302 Location: <!channel> <https://evil.example/login|Log in again> "
    "[Log in again](https://evil.example/login) @everyone @here";

// Every string in the body, joined: what a chat could render.
void Strings(const nlohmann::json& j, std::string& out) {
  if (j.is_string()) out += j.get<std::string>() + "\n";
  for (const auto& item : j) {
    if (j.is_structured()) Strings(item, out);
  }
}

std::string Rendered(const std::string& format) {
  Notification n = notify_preview::SampleNotification();
  n.message = kHostile;
  std::string text;
  Strings(nlohmann::json::parse(MessageFormatNamed(format)->Render(n, "id")), text);
  return text;
}

// What could ping or link: outside the reconciler's own text, none of it unescaped.
void ExpectNoMentions(const std::string& text) {
  EXPECT_THAT(text, Not(HasSubstr("@everyone")));
  EXPECT_THAT(text, Not(HasSubstr("@here")));
}

// Markdown: the message is there, every bracket of it escaped.
class MarkdownFormatTest : public ::testing::TestWithParam<std::string> {};
TEST_P(MarkdownFormatTest, AHostileStatusMessageArrivesInert) {
  const std::string text = Rendered(GetParam());
  EXPECT_THAT(text, HasSubstr(core::InertMarkdown(kHostile)));
  EXPECT_THAT(text, Not(ContainsRegex("[^\\\\]\\[Log in again\\]")));
  EXPECT_THAT(text, Not(ContainsRegex("[^\\\\]<!channel")));
  EXPECT_THAT(text, Not(ContainsRegex("[^\\\\]<https")));
  ExpectNoMentions(text);
}
INSTANTIATE_TEST_SUITE_P(Formats, MarkdownFormatTest,
                         ::testing::Values("discord", "teams", "mattermost"));

// Slack mrkdwn and Google Chat: links and broadcasts are <…>, so no `<` of the message is left.
class AngleMarkupFormatTest : public ::testing::TestWithParam<std::string> {};
TEST_P(AngleMarkupFormatTest, AHostileStatusMessageArrivesInert) {
  const std::string text = Rendered(GetParam());
  EXPECT_THAT(text, HasSubstr(core::InertAngleMarkup(kHostile)));
  EXPECT_THAT(text, Not(HasSubstr("<!channel>")));
  EXPECT_THAT(text, Not(HasSubstr("<https://evil")));
  ExpectNoMentions(text);
}
INSTANTIATE_TEST_SUITE_P(Formats, AngleMarkupFormatTest,
                         ::testing::Values("slack", "slack-bot", "googlechat"));

}  // namespace
}  // namespace tr::reconciler::notify
