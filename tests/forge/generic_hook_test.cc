// /hooks/generic, driven by the post-receive hook docs/pull-requests.md tells users to install
// (examples/hooks/post-receive): real git pushes into a bare repository whose hook signs with
// openssl and posts with curl to the receiver over loopback HTTP.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "base/hmac.h"
#include "httplib.h"
#include "reconciler/features/webhooks/webhook_receiver.h"
#include "reconciler/runtime/logging.h"
#include "spdlog/sinks/ostream_sink.h"
#include "tests/support/process.h"

namespace tr::reconciler::webhooks {
namespace {

using forge::WebhookEvent;
using forge::WebhookKind;
using gitsource::testing::MustRun;
using gitsource::testing::RunCommand;
using gitsource::testing::TempDir;
using gitsource::testing::WriteFile;
using ::testing::HasSubstr;

constexpr char kSecret[] = "generic-hook-secret-for-tests";

class GenericHookTest : public testing::Test {
 protected:
  void SetUp() override {
    queue_ = std::make_unique<WebhookQueue>(16);
    WebhookReceiverOptions options;
    options.listen = "127.0.0.1:0";
    options.secret = kSecret;
    options.branch = "main";
    auto receiver = WebhookReceiver::Start(options, *queue_, metrics_, Env::Default());
    ASSERT_TRUE(receiver.ok()) << receiver.status();
    receiver_ = *std::move(receiver);
    MustRun({"git", "init", "-q", "--bare", "-b", "main", (dir_ / "fleet.git").string()});
    std::filesystem::copy_file(std::string(TR_SOURCE_DIR) + "/examples/hooks/post-receive",
                               dir_ / "fleet.git/hooks/post-receive");
    MustRun({"git", "init", "-q", "-b", "main", (dir_ / "work").string()});
    MustRun({"git", "-C", (dir_ / "work").string(), "commit", "-q", "--allow-empty", "-m", "one"});
  }

  // Pushes HEAD of the work tree to `ref`, the hook signing with `secret`; the push's stderr.
  std::string Push(const std::string& ref, const std::string& secret) {
    WriteFile(dir_ / "secret", secret + "\n");
    gitsource::testing::RunOptions options;
    options.extra_env = {"TALOS_RECONCILER_HOOK_URL=http://127.0.0.1:" +
                             std::to_string(receiver_->port()) + "/hooks/generic",
                         "TALOS_RECONCILER_HOOK_SECRET_FILE=" + (dir_ / "secret").string()};
    auto pushed = RunCommand({"git", "-C", (dir_ / "work").string(), "push", "-q",
                              (dir_ / "fleet.git").string(), "HEAD:" + ref},
                             options);
    EXPECT_EQ(pushed.exit_code, 0) << pushed.err;  // a hook never fails the push
    return pushed.err;
  }

  std::vector<WebhookEvent> Drain() {
    std::vector<WebhookEvent> events;
    std::stop_source stop;
    while (queue_->Size() > 0) events.push_back(*queue_->Pop(stop.get_token()));
    return events;
  }

  httplib::Result Post(const std::string& body, const std::string& signature,
                       const std::string& delivery) {
    httplib::Client client("127.0.0.1", receiver_->port());
    httplib::Headers headers{{"X-Signature-256", signature}, {"X-Delivery-Id", delivery}};
    return client.Post("/hooks/generic", headers, body, "application/json");
  }

  TempDir dir_;
  Metrics metrics_;
  std::unique_ptr<WebhookQueue> queue_;
  std::unique_ptr<WebhookReceiver> receiver_;
};

TEST_F(GenericHookTest, APushToTheWatchedBranchIsQueuedOtherBranchesAreNot) {
  EXPECT_EQ(Push("refs/heads/main", kSecret), "");
  EXPECT_EQ(Push("refs/heads/feature", kSecret), "");
  std::vector<WebhookEvent> events = Drain();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].forge, "generic");
  EXPECT_EQ(events[0].kind, WebhookKind::kPush);
  EXPECT_EQ(events[0].ref, "refs/heads/main");
  const std::string head = MustRun({"git", "-C", (dir_ / "work").string(), "rev-parse", "HEAD"});
  EXPECT_EQ(events[0].delivery, "refs/heads/main@" + head);
  EXPECT_EQ(metrics_.webhook_requests.Value("ignored"), 1u);
}

TEST_F(GenericHookTest, AWrongSecretIsRefusedTheHookSaysSoAndThePushStillSucceeds) {
  const std::string err = Push("refs/heads/main", "not-the-secret");
  EXPECT_THAT(err, HasSubstr("could not tell"));
  EXPECT_TRUE(Drain().empty());
  EXPECT_EQ(metrics_.webhook_requests.Value("bad_signature"), 1u);
}

TEST_F(GenericHookTest, ABodyWithoutARefPollsTheWatchedBranchAndAReplayIsTakenOnce) {
  const std::string signature = "sha256=" + HmacSha256Hex(kSecret, "{}");
  for (int i = 0; i < 2; ++i) {
    auto res = Post("{}", signature, "cron-1");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, i == 0 ? 202 : 200);
  }
  std::vector<WebhookEvent> events = Drain();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].ref, "");
  EXPECT_EQ(events[0].delivery, "cron-1");
}

TEST_F(GenericHookTest, UnsignedOrMalformedDeliveriesAreRefused) {
  auto unsigned_post = Post("{}", "", "d1");
  ASSERT_TRUE(unsigned_post);
  EXPECT_EQ(unsigned_post->status, 401);
  // The GitHub header is not the generic one: a GitHub-signed body is refused here.
  httplib::Client client("127.0.0.1", receiver_->port());
  auto github = client.Post("/hooks/generic",
                            {{"X-Hub-Signature-256", "sha256=" + HmacSha256Hex(kSecret, "{}")}},
                            "{}", "application/json");
  ASSERT_TRUE(github);
  EXPECT_EQ(github->status, 401);
  const std::string not_json = "ref=main";
  auto malformed = Post(not_json, "sha256=" + HmacSha256Hex(kSecret, not_json), "d2");
  ASSERT_TRUE(malformed);
  EXPECT_EQ(malformed->status, 400);
  const std::string number_ref = R"({"ref":7})";
  auto bad_ref = Post(number_ref, "sha256=" + HmacSha256Hex(kSecret, number_ref), "d3");
  ASSERT_TRUE(bad_ref);
  EXPECT_EQ(bad_ref->status, 400);
  EXPECT_TRUE(Drain().empty());
}

// The delivery id is a header the signature does not cover: whatever it holds stays one
// field of the log line.
TEST_F(GenericHookTest, ADeliveryIdCannotAddFieldsToTheLog) {
  std::ostringstream log_text;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text);
  sink->set_pattern("%v");
  ModuleLogger("webhook")->sinks().push_back(sink);
  const std::string forged = "d5 outcome=forged";
  auto res = Post("{}", "sha256=" + HmacSha256Hex(kSecret, "{}"), forged);
  ModuleLogger("webhook")->flush();
  ModuleLogger("webhook")->sinks().pop_back();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 202);
  std::string line;
  std::getline(std::istringstream(log_text.str()), line);
  auto fields = ParseLogFields(line);
  ASSERT_TRUE(fields.has_value()) << line;
  std::map<std::string, std::string> by_key;
  for (const auto& [key, value] : *fields) {
    EXPECT_TRUE(by_key.emplace(key, value).second) << "repeated field " << key << ": " << line;
  }
  EXPECT_EQ(by_key["delivery"], forged);
  EXPECT_EQ(by_key["outcome"], "queued");
}

}  // namespace
}  // namespace tr::reconciler::webhooks
