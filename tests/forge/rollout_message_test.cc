// One message per rollout, updated in place: format=slack-bot through Slack's Web API and
// format=discord through a Discord webhook, against the fakes of tests/support/fake_chat.h
// (real HTTP on loopback, answering as the services document). A rollout is one message whose
// updates go to the same ts / id; threads=nodes replies under it; a restart updates the same
// message instead of posting a second one; 429 waits as asked; a message deleted by someone is
// posted anew; the token is sent and never logged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "reconciler/features/notify/notify_target.h"
#include "reconciler/features/notify/webhook_notifier.h"
#include "reconciler/runtime/logging.h"
#include "spdlog/sinks/ostream_sink.h"
#include "tests/support/fake_chat.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler::notify {
namespace {

namespace fs = std::filesystem;
using fake_chat::ChatMessage;
using fake_chat::FakeChat;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kToken[] = "xoxb-the-bot-token-of-the-tests-1234";
constexpr char kChannel[] = "C0TESTCHAN1";

class RolloutMessageTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tr-rollout-message-" + std::to_string(::getpid()) + "-" +
                                        testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "token") << kToken << "\n";
    options_.spool_dir = dir_ / "spool";
    options_.first_retry = std::chrono::milliseconds(20);
    options_.max_retry = std::chrono::milliseconds(100);
    options_.timeout = std::chrono::seconds(5);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<WebhookNotifier> Start(const std::string& entry) {
    auto target = ParseNotifyTarget(entry);
    EXPECT_TRUE(target.ok()) << target.status();
    if (!target.ok()) return nullptr;
    auto notifier = WebhookNotifier::Start(*std::move(target), options_, metrics_, env_);
    EXPECT_TRUE(notifier.ok()) << notifier.status();
    return notifier.ok() ? *std::move(notifier) : nullptr;
  }
  std::string SlackBot(const FakeChat& chat, const std::string& more = "") {
    return "url=" + chat.SlackUrl() + ",format=slack-bot,channel=" + kChannel +
           ",token-file=" + (dir_ / "token").string() + more;
  }

  // The notifications of a rollout of `nodes` nodes of prod-eu-1 to Talos 1.12.0.
  static std::vector<Notification> Rollout(int nodes, const std::string& commit = "9a1c7e2f00") {
    Notification n;
    n.cluster = "prod-eu-1";
    n.commit = commit;
    n.phase = "UpgradingTalos";
    n.talos_current = "1.11.6";
    n.talos_target = "1.12.0";
    n.progress = "0/" + std::to_string(nodes);
    std::vector<Notification> out{n};
    for (int i = 1; i <= nodes; ++i) {
      n.event = NotificationEvent::kNodeUpgraded;
      n.node = "w-" + std::to_string(i);
      n.message = "upgraded to Talos 1.12.0 in 6m12s";
      n.progress = std::to_string(i) + "/" + std::to_string(nodes);
      out.push_back(n);
    }
    n.event = NotificationEvent::kRolloutCompleted;
    n.phase = "Ready";
    n.talos_current = "1.12.0";
    n.node.clear();
    n.message = "every node runs Talos 1.12.0";
    out.push_back(n);
    return out;
  }

  static std::vector<ChatMessage> TopLevel(const FakeChat& chat) {
    std::vector<ChatMessage> out;
    for (const ChatMessage& m : chat.Messages()) {
      if (m.thread.empty()) out.push_back(m);
    }
    return out;
  }

  fs::path dir_;
  WebhookNotifierOptions options_;
  Metrics metrics_;
  // Simulated time from the real moment (receivers check the signed timestamps against theirs):
  // each test moves it to the sender's retries and paces with RunTimersUntil.
  test_support::SimulatedEnv env_{Env::Default().Now()};
};

TEST_F(RolloutMessageTest, SlackBotPostsOneMessagePerRolloutAndUpdatesIt) {
  FakeChat chat(kToken, kChannel);
  auto notifier = Start(SlackBot(chat));
  for (const Notification& n : Rollout(3)) notifier->Notify(n);
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  const auto messages = chat.Messages();
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(chat.Calls("chat.postMessage"), 1);
  EXPECT_GE(chat.Calls("chat.update"), 1);
  const std::string text = messages[0].content["text"];
  EXPECT_THAT(text, HasSubstr("prod-eu-1"));
  EXPECT_THAT(text, HasSubstr("completed"));
  EXPECT_THAT(messages[0].content["blocks"].dump(), HasSubstr(":white_check_mark:"));
  EXPECT_THAT(chat.Problems(), IsEmpty());
  for (const std::string& auth : chat.Authorizations()) EXPECT_EQ(auth, std::string("Bearer ") + kToken);
  // A second rollout (another commit) is a second message.
  for (const Notification& n : Rollout(1, "b0b0b0b0")) notifier->Notify(n);
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  EXPECT_EQ(TopLevel(chat).size(), 2u);
}

TEST_F(RolloutMessageTest, ThreadsNodesRepliesPerNodeUnderTheRolloutsMessage) {
  FakeChat chat(kToken, kChannel);
  auto notifier = Start(SlackBot(chat, ",threads=nodes"));
  for (const Notification& n : Rollout(2)) notifier->Notify(n);
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  const auto top = TopLevel(chat);
  ASSERT_EQ(top.size(), 1u);
  std::vector<std::string> replies;
  for (const ChatMessage& m : chat.Messages()) {
    if (!m.thread.empty()) {
      EXPECT_EQ(m.thread, top[0].id);
      replies.push_back(m.content["text"]);
    }
  }
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_THAT(replies[0], HasSubstr("`w-1`"));
  EXPECT_THAT(replies[1], HasSubstr("`w-2`"));
  EXPECT_THAT(chat.Problems(), IsEmpty());
}

TEST_F(RolloutMessageTest, ARestartUpdatesTheSameMessageInsteadOfPostingASecond) {
  FakeChat chat(kToken, kChannel);
  const auto rollout = Rollout(2);
  {
    auto notifier = Start(SlackBot(chat));
    notifier->Notify(rollout[0]);
    notifier->Notify(rollout[1]);
    ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  }
  ASSERT_EQ(chat.Messages().size(), 1u);
  auto restarted = Start(SlackBot(chat));
  for (size_t i = 2; i < rollout.size(); ++i) restarted->Notify(rollout[i]);
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return restarted->Pending() == 0; }));
  const auto messages = chat.Messages();
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(chat.Calls("chat.postMessage"), 1);
  EXPECT_THAT(messages[0].content["text"].get<std::string>(), HasSubstr("completed"));
}

TEST_F(RolloutMessageTest, SpooledUpdatesSentAfterARestartGoToTheSameMessage) {
  FakeChat chat(kToken, kChannel);
  const auto rollout = Rollout(2);
  {
    auto notifier = Start(SlackBot(chat));
    notifier->Notify(rollout[0]);
    ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
    chat.RateLimitNext(1000, 600);  // everything after waits: still spooled at the restart
    for (size_t i = 1; i < rollout.size(); ++i) notifier->Notify(rollout[i]);
    ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return chat.Calls("chat.update") >= 1; }));
  }
  chat.RateLimitNext(0, 0);
  auto restarted = Start(SlackBot(chat));
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return restarted->Pending() == 0; }));
  const auto messages = chat.Messages();
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(chat.Calls("chat.postMessage"), 1);
  EXPECT_THAT(messages[0].content["text"].get<std::string>(), HasSubstr("completed"));
}

TEST_F(RolloutMessageTest, RateLimitedCallsWaitAsAskedAndAreNotCountedAsFailures) {
  options_.max_attempts = 1;  // a counted failure would drop the delivery
  FakeChat chat(kToken, kChannel);
  chat.RateLimitNext(2, 0.2);
  auto notifier = Start(SlackBot(chat));
  notifier->Notify(Rollout(1)[0]);
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  EXPECT_EQ(chat.Calls("chat.postMessage"), 3);
  EXPECT_EQ(chat.Messages().size(), 1u);
  EXPECT_EQ(metrics_.notifications.Value("waited"), 2u);
  EXPECT_EQ(metrics_.notifications.Value("dropped"), 0u);
}

TEST_F(RolloutMessageTest, AMessageDeletedBySomeoneIsPostedAnew) {
  FakeChat chat(kToken, kChannel);
  const auto rollout = Rollout(1);
  auto notifier = Start(SlackBot(chat));
  notifier->Notify(rollout[0]);
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  chat.Delete(chat.Messages().at(0).id);
  notifier->Notify(rollout[1]);
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  const auto messages = chat.Messages();
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(chat.Calls("chat.postMessage"), 2);
  EXPECT_THAT(messages[0].content["text"].get<std::string>(), HasSubstr("1/1"));
}

TEST_F(RolloutMessageTest, AWrongTokenIsAFailedAttemptAndTheTokenIsNeverLogged) {
  std::ostringstream log_text;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text);
  auto log = ModuleLogger("notify");
  log->sinks().push_back(sink);
  options_.max_attempts = 2;
  {
    FakeChat chat("xoxb-another-token", kChannel);
    auto notifier = Start(SlackBot(chat));
    notifier->Notify(Rollout(1)[0]);
    ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
    EXPECT_THAT(chat.Messages(), IsEmpty());
    EXPECT_EQ(metrics_.notifications.Value("dropped"), 1u);
  }
  log->sinks().pop_back();
  EXPECT_THAT(log_text.str(), HasSubstr("invalid_auth"));
  EXPECT_THAT(log_text.str(), Not(HasSubstr(kToken)));
}

TEST_F(RolloutMessageTest, SlackBotEntriesNeedTheirTokenAndChannel) {
  auto defaulted = ParseNotifyTarget("format=slack-bot,channel=C1,token-file=" + (dir_ / "token").string());
  ASSERT_TRUE(defaulted.ok()) << defaulted.status();
  EXPECT_EQ(defaulted->origin, "https://slack.com");
  EXPECT_EQ(defaulted->path, "/api");
  EXPECT_EQ(defaulted->bot_token, kToken);
  for (const std::string& bad : std::vector<std::string>{
           "format=slack-bot,channel=C1", "format=slack-bot,token-file=" + (dir_ / "token").string(),
           "format=slack-bot,channel=C1,token-file=/nonexistent/token",
           "format=slack-bot,channel=C1,threads=clusters,token-file=" + (dir_ / "token").string(),
           "url=https://x/y,format=slack,channel=C1", "url=https://x/y,format=discord,threads=nodes"}) {
    const absl::Status s = ParseNotifyTarget(bad).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(s.message(), Not(HasSubstr(kToken))) << bad;
  }
}

TEST_F(RolloutMessageTest, DiscordExecutesWithWaitThenEditsTheSameMessage) {
  FakeChat chat(kToken, kChannel);
  auto notifier = Start("url=" + chat.DiscordUrl() + ",format=discord");
  for (const Notification& n : Rollout(3)) notifier->Notify(n);
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  const auto messages = chat.Messages();
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(chat.Calls("discord.execute"), 1);
  EXPECT_GE(chat.Calls("discord.edit"), 1);
  const auto& embed = messages[0].content["embeds"][0];
  EXPECT_THAT(embed["title"].get<std::string>(), HasSubstr("prod-eu-1"));
  EXPECT_THAT(embed["description"].get<std::string>(), HasSubstr("completed"));
  EXPECT_EQ(embed["color"], 0x1E9E5A);  // green, as teams and mattermost show completed
  EXPECT_EQ(messages[0].content["allowed_mentions"]["parse"], nlohmann::json::array());
  EXPECT_THAT(chat.Problems(), IsEmpty());
}

// A webhook URL that holds its token is read from a file (url-file=), kept off the command
// line; a file without a URL is refused naming the file, never quoting it.
TEST_F(RolloutMessageTest, AUrlFileKeepsTheWebhooksTokenOffTheCommandLine) {
  FakeChat chat(kToken, kChannel);
  std::ofstream(dir_ / "discord-url") << chat.DiscordUrl() << "\n";
  auto notifier = Start("url-file=" + (dir_ / "discord-url").string() + ",format=discord");
  notifier->Notify(Rollout(1)[0]);
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  EXPECT_EQ(chat.Messages().size(), 1u);
  std::ofstream(dir_ / "bad-url") << "discord-webhook-token-of-the-tests\n";
  const absl::Status bad =
      ParseNotifyTarget("url-file=" + (dir_ / "bad-url").string() + ",format=discord").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr((dir_ / "bad-url").string()));
  EXPECT_THAT(bad.message(), Not(HasSubstr("discord-webhook-token")));
  EXPECT_EQ(ParseNotifyTarget("url=https://x/y,url-file=" + (dir_ / "discord-url").string() +
                              ",format=discord")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(RolloutMessageTest, DiscordEditsAfterARestartGoToTheSameMessage) {
  FakeChat chat(kToken, kChannel);
  const auto rollout = Rollout(2);
  const std::string entry = "url=" + chat.DiscordUrl() + ",format=discord";
  {
    auto notifier = Start(entry);
    notifier->Notify(rollout[0]);
    ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
    chat.RateLimitNext(1000, 600);  // what follows is still spooled at the restart
    for (size_t i = 1; i < rollout.size(); ++i) notifier->Notify(rollout[i]);
    ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return chat.Calls("discord.edit") >= 1; }));
  }
  chat.RateLimitNext(0, 0);
  auto restarted = Start(entry);
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return restarted->Pending() == 0; }));
  ASSERT_EQ(chat.Messages().size(), 1u);
  EXPECT_EQ(chat.Calls("discord.execute"), 1);
  EXPECT_THAT(chat.Messages()[0].content["embeds"][0]["description"].get<std::string>(),
              HasSubstr("completed"));
}

TEST_F(RolloutMessageTest, DiscordRateLimitsWaitAndADeletedMessageIsPostedAnew) {
  options_.max_attempts = 1;
  FakeChat chat(kToken, kChannel);
  const auto rollout = Rollout(1);
  auto notifier = Start("url=" + chat.DiscordUrl() + ",format=discord");
  chat.RateLimitNext(1, 0.1);
  notifier->Notify(rollout[0]);
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  ASSERT_EQ(chat.Messages().size(), 1u);
  EXPECT_EQ(chat.Calls("discord.execute"), 2);
  chat.Delete(chat.Messages()[0].id);
  notifier->Notify(rollout[1]);
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  EXPECT_EQ(chat.Calls("discord.edit"), 1);
  EXPECT_EQ(chat.Calls("discord.execute"), 3);
  ASSERT_EQ(chat.Messages().size(), 1u);
  EXPECT_THAT(chat.Messages()[0].content["embeds"][0]["description"].get<std::string>(),
              HasSubstr("w-1"));
  EXPECT_EQ(metrics_.notifications.Value("dropped"), 0u);
}

}  // namespace
}  // namespace tr::reconciler::notify
