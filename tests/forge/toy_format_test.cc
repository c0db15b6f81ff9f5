// A notification format added as the manual says (docs/architecture.md, "Notifications"): one
// class with its body, its own key and its own transport, registered with one line, and used
// through the real registry, the real --notify parsing and the real sender.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "base/http_client.h"
#include "nlohmann/json.hpp"
#include "reconciler/features/notify/message_format.h"
#include "reconciler/features/notify/notify_target.h"
#include "reconciler/features/notify/poster.h"
#include "reconciler/features/notify/webhook_notifier.h"
#include "tests/forge/notify_receiver.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler::notify {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The toy's transport: the body wrapped with the room its key names, POSTed to the URL.
class ToyPoster final : public Poster {
 public:
  ToyPoster(const NotifyTarget& target, const PostContext& context)
      : target_(target), context_(context) {}
  PostOutcome Post(const Spooled& s) override {
    const auto client = NewHttpClient(target_.origin, {context_.timeout, context_.timeout, {}});
    const nlohmann::json wrapped = {{"room", target_.channel}, {"said", s.body}};
    const CappedAnswer answer =
        SendCapped(*client, MakeRequest("POST", target_.path, {}, wrapped.dump(), "application/json"),
                   context_.max_answer_bytes);
    if (OutcomeOf(answer).Succeeded()) return PostOutcome::Sent();
    return PostOutcome::NotDelivered(answer, "toy", std::chrono::milliseconds(10));
  }

 private:
  const NotifyTarget& target_;
  const PostContext context_;
};

// The toy format: one line of text, a key room= of its own, its own poster.
class ToyFormat final : public MessageFormat {
 public:
  std::string_view Name() const override { return "toy"; }
  bool NeedsSecret() const override { return false; }
  std::string Render(const Notification& n, const std::string& /*delivery_id*/) const override {
    return n.cluster + " " + NotificationEventName(n.event);
  }
  std::vector<std::string> Keys() const override { return {"room"}; }
  std::string KeysUsage() const override { return "room=NAME"; }
  absl::Status TakeKeys(const FormatKeys& keys, NotifyTarget& target) const override {
    const auto room = keys.find("room");
    if (room == keys.end() || room->second.empty()) {
      return NotifyFlagError("format=toy needs room=");
    }
    target.channel = room->second;
    return absl::OkStatus();
  }
  std::unique_ptr<Poster> NewPoster(const NotifyTarget& target,
                                    const PostContext& context) const override {
    return std::make_unique<ToyPoster>(target, context);
  }
};

// The one registration line.
const bool kToyRegistered = RegisterMessageFormat(std::make_shared<ToyFormat>()).ok();

TEST(ToyFormatTest, TheRegistryKnowsItsNameAndKeys) {
  ASSERT_TRUE(kToyRegistered);
  ASSERT_NE(MessageFormatNamed("toy"), nullptr);
  EXPECT_THAT(MessageFormatNames(), HasSubstr("googlechat or toy"));
  EXPECT_EQ(RegisterMessageFormat(std::make_shared<ToyFormat>()).code(),
            absl::StatusCode::kAlreadyExists);

  auto target = ParseNotifyTarget("url=http://127.0.0.1:1/hook,format=toy,room=lobby");
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(target->channel, "lobby");
  // Its key is its own: refused without it, and refused to another format.
  EXPECT_THAT(ParseNotifyTarget("url=http://127.0.0.1:1/hook,format=toy").status().message(),
              HasSubstr("format=toy needs room="));
  EXPECT_THAT(
      ParseNotifyTarget("url=http://127.0.0.1:1/hook,format=slack,room=lobby").status().message(),
      HasSubstr("room= is a key of format=toy only"));
  // An unknown key's message lists it with the others.
  EXPECT_THAT(ParseNotifyTarget("url=http://127.0.0.1:1/hook,colour=red").status().message(),
              HasSubstr("token-file, channel, threads, room, "));
}

TEST(ToyFormatTest, TheSenderDeliversThroughItsOwnTransport) {
  ASSERT_TRUE(kToyRegistered);
  const fs::path dir = fs::temp_directory_path() / ("tr-toy-format-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  int answered = 0;
  forge_test::Receiver receiver([&answered](int) { return ++answered == 1 ? 429 : 204; });
  auto target = ParseNotifyTarget("url=" + receiver.Url() + ",format=toy,room=lobby");
  ASSERT_TRUE(target.ok()) << target.status();
  WebhookNotifierOptions options;
  options.spool_dir = dir / "spool";
  Metrics metrics;
  test_support::SimulatedEnv env;
  auto notifier = WebhookNotifier::Start(*target, options, metrics, env);
  ASSERT_TRUE(notifier.ok()) << notifier.status();
  Notification n;
  n.event = NotificationEvent::kRolloutStarted;
  n.cluster = "prod-eu-1";
  (*notifier)->Notify(n);
  ASSERT_TRUE(env.RunTimersUntil(1, [&] { return (*notifier)->Pending() == 0; }));
  const auto got = receiver.Got();
  // The 429 was waited out as the one table says (not a failed attempt), then sent.
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(got[1].body),
            (nlohmann::json{{"room", "lobby"}, {"said", "prod-eu-1 rollout.started"}}));
  EXPECT_EQ(metrics.notifications.Value("waited"), 1u);
  EXPECT_EQ(metrics.notifications.Value("retried"), 0u);
  notifier->reset();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tr::reconciler::notify
