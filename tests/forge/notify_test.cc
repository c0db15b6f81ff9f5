// Outbound notifications: what a status change produces, the --notify syntax, and delivery to
// a real HTTP receiver on loopback (signing checked by GitHub's own verifier under node),
// retries, giving up, and the spool surviving a restart.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "httplib.h"
#include "nlohmann/json.hpp"
#include "reconciler/features/notify/notification.h"
#include "reconciler/features/notify/notify_target.h"
#include "reconciler/features/notify/standard_webhooks.h"
#include "reconciler/features/notify/webhook_notifier.h"
#include "tests/forge/forge_test_support.h"
#include "tests/forge/notify_receiver.h"
#include "tests/support/loopback_http.h"
#include "tests/support/simulated_env.h"
#include "tests/support/wait.h"

namespace tr::reconciler::notify {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

core::ClusterStatus Status(core::ClusterPhase phase) {
  core::ClusterStatus s;
  s.cluster = "prod-eu-1";
  s.phase = phase;
  s.talos = {"1.11.6", "1.12.0", "1.12.0", core::ComponentState::kInProgress, "", "1/3"};
  s.nodes = {{"cp-0", "controlplane", "1.11.6", "1.35.0", true, true, {}, "", {}}};
  return s;
}

std::vector<std::string> Events(const std::vector<Notification>& notifications) {
  std::vector<std::string> names;
  for (const auto& n : notifications) names.push_back(NotificationEventName(n.event));
  return names;
}

TEST(NotificationsBetweenTest, PhaseChangesAndNodeOperations) {
  const auto ready = Status(core::ClusterPhase::kReady);
  auto upgrading = Status(core::ClusterPhase::kUpgradingTalos);
  EXPECT_THAT(Events(NotificationsBetween(&ready, upgrading)), ElementsAre("rollout.started"));
  EXPECT_THAT(Events(NotificationsBetween(&upgrading, upgrading)), ElementsAre());
  auto node_done = upgrading;
  node_done.nodes[0].last_operation = "upgraded to Talos 1.12.0 in 6m12s";
  const auto upgraded = NotificationsBetween(&upgrading, node_done);
  ASSERT_THAT(Events(upgraded), ElementsAre("node.upgraded"));
  EXPECT_EQ(upgraded[0].node, "cp-0");
  EXPECT_EQ(upgraded[0].message, "upgraded to Talos 1.12.0 in 6m12s");
  auto done = node_done;
  done.phase = core::ClusterPhase::kReady;
  EXPECT_THAT(Events(NotificationsBetween(&node_done, done)), ElementsAre("rollout.completed"));
  EXPECT_THAT(Events(NotificationsBetween(&upgrading, Status(core::ClusterPhase::kUpgradeFailed))),
              ElementsAre("rollout.failed"));
  EXPECT_THAT(Events(NotificationsBetween(nullptr, Status(core::ClusterPhase::kBlocked))),
              ElementsAre("rollout.blocked"));
  EXPECT_THAT(Events(NotificationsBetween(&ready, Status(core::ClusterPhase::kPaused))),
              ElementsAre());
}

// A Standard Webhooks secret of the tests (32 bytes), and another one.
constexpr char kSecret[] = "whsec_dGhlLW5vdGlmeS1rZXktb2YtdGhlLXRlc3RzLTMyYnk=";
constexpr char kOtherSecret[] = "whsec_YW5vdGhlci1rZXktb2YtdGhlLXRlc3RzLTMyYnl0ZXM=";

TEST(NotifyTargetTest, ParsesEntriesAndNamesWhatIsWrong) {
  const fs::path secret =
      fs::temp_directory_path() / ("tr-notify-secret-" + std::to_string(::getpid()));
  std::ofstream(secret) << kSecret << "\n";
  auto target = ParseNotifyTarget(
      "url=https://hooks.example.test:8443/a/b?x=1,format=json,secret-file=" + secret.string());
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(target->origin, "https://hooks.example.test:8443");
  EXPECT_EQ(target->path, "/a/b?x=1");
  EXPECT_EQ(target->signing_key, "the-notify-key-of-the-tests-32by");
  EXPECT_EQ(target->key.size(), 12u);
  auto slack = ParseNotifyTarget("url=https://hooks.slack.test/services/T/B/X,format=slack");
  ASSERT_TRUE(slack.ok()) << slack.status();
  EXPECT_EQ(slack->format->Name(), "slack");
  EXPECT_TRUE(slack->signing_key.empty());
  for (const std::string& bad : std::vector<std::string>{
           "format=json", "url=ftp://x/y,format=slack", "url=https://x/y,format=xml",
           "url=https://x/y,format=json", "url=https://x/y,colour=red",
           "url=https://x/y,secret-file=/nonexistent/secret",
           "url=https://x/y,format=slack,secret-file=" + secret.string()}) {
    EXPECT_EQ(ParseNotifyTarget(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  fs::remove(secret);
}

// Anything but whsec_ and a key of 24 bytes or more in base64 is refused at start, with a
// message that says what to write and never quotes the file.
TEST(NotifyTargetTest, ASecretThatIsNotAStandardWebhooksSecretIsRefusedUnquoted) {
  const fs::path secret =
      fs::temp_directory_path() / ("tr-notify-secret-" + std::to_string(::getpid()));
  for (const std::string bad :
       {"plain-old-hmac-secret-of-forty-characters", "whsec_not*base64!", "whsec_c2hvcnQta2V5",
        "WHSEC_dGhlLW5vdGlmeS1rZXktb2YtdGhlLXRlc3RzLTMyYnk="}) {
    std::ofstream(secret) << bad << "\n";
    const absl::Status refused =
        ParseNotifyTarget("url=https://x/y,format=json,secret-file=" + secret.string()).status();
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(refused.message(), HasSubstr(secret.string() + ": ")) << refused;
    EXPECT_THAT(refused.message(), HasSubstr("openssl rand -base64 32")) << refused;
    EXPECT_THAT(refused.message(), Not(HasSubstr(bad.substr(6, 8)))) << refused;
  }
  fs::remove(secret);
}

TEST(StandardWebhooksTest, SignsIdTimestampAndBodyAsTheSpecificationsExampleDoes) {
  // The specification's published example: secret, id, timestamp, body and signature.
  absl::StatusOr<std::string> key = StandardWebhookKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  ASSERT_TRUE(key.ok()) << key.status();
  const auto headers = StandardWebhookHeaders(*key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330,
                                              R"({"test": 2432232314})");
  EXPECT_THAT(headers, ElementsAre(Pair("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek"),
                                   Pair("webhook-timestamp", "1614265330"),
                                   Pair("webhook-signature",
                                        "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")));
}

using forge_test::Received;
using forge_test::Receiver;

class WebhookNotifierTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() / ("tr-notify-" + std::to_string(::getpid()) + "-" +
                                     testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "secret") << kSecret << "\n";
    options_.spool_dir = dir_ / "spool";
    options_.first_retry = std::chrono::milliseconds(20);
    options_.max_retry = std::chrono::milliseconds(100);
    options_.timeout = std::chrono::seconds(5);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<WebhookNotifier> Start(const std::string& url, const std::string& format) {
    // Only a format that signs takes a secret.
    const std::string secret =
        format == "json" ? ",secret-file=" + (dir_ / "secret").string() : std::string();
    auto target = ParseNotifyTarget("url=" + url + ",format=" + format + secret);
    EXPECT_TRUE(target.ok()) << target.status();
    auto notifier = WebhookNotifier::Start({*target}, options_, metrics_, env_);
    EXPECT_TRUE(notifier.ok()) << notifier.status();
    return notifier.ok() ? *std::move(notifier) : nullptr;
  }

  static Notification Started() {
    Notification n;
    n.event = NotificationEvent::kRolloutStarted;
    n.cluster = "prod-eu-1";
    n.phase = "UpgradingTalos";
    n.talos_current = "1.11.6";
    n.talos_target = "1.12.0";
    return n;
  }

  // Whether the Standard Webhooks library (npm `standardwebhooks`) verifies `r` with `secret`,
  // as a receiver would: headers, timestamp tolerance and signature.
  bool Verified(const Received& r, const std::string& secret) {
    const fs::path body = dir_ / ("body-" + std::to_string(bodies_++));
    std::ofstream(body, std::ios::binary) << r.body;
    const std::string verify = "node '" + std::string(TR_SOURCE_DIR) +
                               "/tests/forge/verify_standard_webhook.mjs' '" +
                               forge_test::NodeModules() + "' '" + secret + "' '" + body.string() +
                               "' '" + r.delivery + "' '" + r.timestamp + "' '" + r.signature + "'";
    return std::system(verify.c_str()) == 0;
  }

  fs::path dir_;
  WebhookNotifierOptions options_;
  Metrics metrics_;
  // Simulated time from the real moment (receivers check the signed timestamps against theirs):
  // each test moves it to the sender's retries and paces with RunTimersUntil.
  test_support::SimulatedEnv env_{Env::Default().Now()};
  int bodies_ = 0;
};

TEST_F(WebhookNotifierTest, JsonIsSignedSoAnIndependentVerifierAcceptsIt) {
  Receiver receiver([](int) { return 204; });
  auto notifier = Start(receiver.Url(), "json");
  notifier->Notify(Started());
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  const auto got = receiver.Got();
  ASSERT_EQ(got.size(), 1u);
  const auto body = nlohmann::json::parse(got[0].body);
  EXPECT_EQ(body["event"], "rollout.started");
  EXPECT_EQ(body["cluster"], "prod-eu-1");
  EXPECT_EQ(body["id"], got[0].delivery);
  EXPECT_EQ(body["talos"]["target"], "1.12.0");
  // The whole shape, pinned (a change is recorded in CHANGELOG.md); message, node, progress and
  // commit appear when set.
  std::vector<std::string> keys;
  for (const auto& [key, value] : body.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"apiVersion", "cluster", "event", "id", "kind",
                                            "kubernetes", "phase", "talos", "time"}));
  EXPECT_EQ(body["apiVersion"], "talos-reconciler.dev/v1alpha1");
  EXPECT_EQ(body["kind"], "Notification");
  EXPECT_EQ(got[0].event, "rollout.started");
  EXPECT_TRUE(Verified(got[0], kSecret)) << got[0].signature;
  EXPECT_FALSE(Verified(got[0], kOtherSecret));
  Received tampered = got[0];
  tampered.body.replace(tampered.body.find("prod-eu-1"), 9, "prod-eu-2");
  EXPECT_FALSE(Verified(tampered, kSecret));
  EXPECT_EQ(metrics_.notifications.Value("sent"), 1u);
}

// The cluster's labels, when it has some, so that a receiver can route by them.
TEST_F(WebhookNotifierTest, JsonCarriesTheClustersLabels) {
  Receiver receiver([](int) { return 204; });
  auto notifier = Start(receiver.Url(), "json");
  Notification labelled = Started();
  labelled.labels = {{"env", "prod"}, {"team", "storage"}};
  notifier->Notify(labelled);
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  const auto got = receiver.Got();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(got[0].body)["labels"],
            (nlohmann::json{{"env", "prod"}, {"team", "storage"}}));
  EXPECT_TRUE(Verified(got[0], kSecret));
}

TEST_F(WebhookNotifierTest, FailedAttemptsAreRetriedWithTheSameDeliveryIdEachSigned) {
  Receiver receiver([](int attempt) { return attempt <= 2 ? 500 : 200; });
  auto notifier = Start(receiver.Url(), "json");
  notifier->Notify(Started());
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  const auto got = receiver.Got();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].delivery, got[2].delivery);
  EXPECT_EQ(got[0].body, got[2].body);
  for (const Received& r : got) EXPECT_TRUE(Verified(r, kSecret)) << r.signature;
  EXPECT_EQ(metrics_.notifications.Value("retried"), 2u);
  EXPECT_EQ(metrics_.notifications.Value("sent"), 1u);
}

TEST_F(WebhookNotifierTest, SlackGetsOneLineOfTextAndNoSignature) {
  Receiver receiver([](int) { return 200; });
  auto notifier = Start(receiver.Url(), "slack");
  notifier->Notify(Started());
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  const auto got = receiver.Got();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_THAT(nlohmann::json::parse(got[0].body)["text"].get<std::string>(),
              HasSubstr("*prod-eu-1* rollout.started"));
  EXPECT_EQ(got[0].signature, "");
  EXPECT_EQ(got[0].delivery, "");
}

TEST_F(WebhookNotifierTest, GivesUpAfterTheLastAttemptAndEmptiesTheSpool) {
  options_.max_attempts = 3;
  Receiver receiver([](int) { return 500; });
  auto notifier = Start(receiver.Url(), "json");
  notifier->Notify(Started());
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  EXPECT_EQ(receiver.Got().size(), 3u);
  EXPECT_EQ(metrics_.notifications.Value("dropped"), 1u);
  EXPECT_EQ(metrics_.notifications.Value("sent"), 0u);
}

TEST_F(WebhookNotifierTest, SpooledDeliveriesSurviveARestartAndKeepTheirOrder) {
  Receiver down([](int) { return 503; });
  options_.first_retry = std::chrono::minutes(10);  // nothing is retried before the restart
  {
    auto notifier = Start(down.Url(), "json");
    Notification failed = Started();
    failed.event = NotificationEvent::kRolloutFailed;
    notifier->Notify(Started());
    notifier->Notify(failed);
    ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return !down.Got().empty(); }));
    EXPECT_EQ(notifier->Pending(), 2u);
  }
  const std::string first_delivery = down.Got()[0].delivery;
  // The same receiver URL, now answering: the spool is keyed by URL, so point it there.
  options_.first_retry = std::chrono::milliseconds(20);
  Receiver up([](int) { return 200; });
  auto target = ParseNotifyTarget("url=" + down.Url() +
                                  ",format=json,secret-file=" + (dir_ / "secret").string());
  ASSERT_TRUE(target.ok());
  target->origin = up.Url().substr(0, up.Url().rfind('/'));
  auto restarted = WebhookNotifier::Start({*target}, options_, metrics_, env_);
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return (*restarted)->Pending() == 0; }));
  const auto got = up.Got();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].delivery, first_delivery);
  EXPECT_EQ(got[0].event, "rollout.started");
  EXPECT_EQ(got[1].event, "rollout.failed");
  // Every attempt, before the restart and after it, verifies as a receiver checks it.
  std::vector<Received> every = down.Got();
  every.insert(every.end(), got.begin(), got.end());
  for (const Received& r : every) EXPECT_TRUE(Verified(r, kSecret)) << r.delivery;
  EXPECT_TRUE(fs::is_empty(options_.spool_dir / target->key));
}

// At least once holds for every format that POSTs: what a down receiver did not take is in the
// spool, and the restarted reconciler sends the same body.
TEST_F(WebhookNotifierTest, EveryPostingFormatsSpoolSurvivesARestart) {
  for (const std::string format : {"slack", "teams", "mattermost", "googlechat"}) {
    SCOPED_TRACE(format);
    Receiver receiver([](int attempt) { return attempt == 1 ? 503 : 200; });
    options_.first_retry = std::chrono::minutes(10);  // nothing is retried before the restart
    {
      auto notifier = Start(receiver.Url(), format);
      notifier->Notify(Started());
      ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return !receiver.Got().empty(); }));
      EXPECT_EQ(notifier->Pending(), 1u);
    }
    options_.first_retry = std::chrono::milliseconds(20);
    auto restarted = Start(receiver.Url(), format);
    ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return restarted->Pending() == 0; }));
    const auto got = receiver.Got();
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[1].body, got[0].body);
  }
}

TEST_F(WebhookNotifierTest, NotifyReturnsWhileTheReceiverHangs) {
  std::atomic<bool> release{false};
  test_support::Watched<int> inside;  // deliveries the receiver holds
  Receiver slow([&](int) {
    inside.Change([](int& n) { ++n; });
    release.wait(false);
    return 200;
  });
  auto notifier = Start(slow.Url(), "json");
  notifier->Notify(Started());
  ASSERT_TRUE(inside.WaitFor([](int n) { return n == 1; }));
  // The receiver holds the first delivery; more notifications are taken at once.
  notifier->Notify(Started());
  notifier->Notify(Started());
  EXPECT_EQ(notifier->Pending(), 3u);
  release = true;
  release.notify_all();
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  EXPECT_EQ(slow.Got().size(), 3u);
}

fs::perms Mode(const fs::path& path) { return fs::status(path).permissions() & fs::perms::all; }

TEST_F(WebhookNotifierTest, TheSpoolIsReadableByItsOwnerOnly) {
  Receiver down([](int) { return 503; });
  options_.first_retry = std::chrono::minutes(10);  // the delivery stays spooled
  auto notifier = Start(down.Url(), "json");
  notifier->Notify(Started());
  // Once the failed attempt is settled nothing rewrites the spool: one file, the delivery.
  const fs::path target =
      options_.spool_dir / ParseNotifyTarget("url=" + down.Url() + ",format=json,secret-file=" +
                                             (dir_ / "secret").string())
                               ->key;
  const auto spooled = [&] {
    std::vector<fs::path> files;
    for (const auto& file : fs::directory_iterator(target)) files.push_back(file.path());
    return files;
  };
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] {
    return metrics_.notifications.Value("retried") == 1 && spooled().size() == 1 &&
           spooled()[0].extension() == ".json";
  }));
  EXPECT_EQ(Mode(options_.spool_dir), fs::perms::owner_all);
  EXPECT_EQ(Mode(target), fs::perms::owner_all);
  EXPECT_EQ(Mode(spooled()[0]), fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(WebhookNotifierTest, AReceiversEndlessAnswerIsNotReadPastTheCap) {
  constexpr size_t kTotal = size_t{64} << 20;
  std::atomic<size_t> written{0};
  auto routes = std::make_unique<httplib::Server>();
  routes->Post("/hook", [&](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/plain", [&](size_t, httplib::DataSink& sink) {
      static const std::string kPiece(65536, 'x');
      if (!sink.write(kPiece.data(), kPiece.size())) return false;
      written += kPiece.size();
      if (written >= kTotal) sink.done();
      return true;
    });
  });
  test_support::LoopbackServer server(std::move(routes));
  auto notifier = Start("http://127.0.0.1:" + std::to_string(server.port()) + "/hook", "json");
  notifier->Notify(Started());
  ASSERT_TRUE(env_.RunTimersUntil(1, [&] { return notifier->Pending() == 0; }));
  // The 200 was enough; reading stopped at the 1 MiB cap, long before the 64 MiB were sent.
  EXPECT_EQ(metrics_.notifications.Value("sent"), 1u);
  EXPECT_EQ(options_.max_answer_bytes, size_t{1} << 20);
  EXPECT_LT(written.load(), size_t{32} << 20);
}

}  // namespace
}  // namespace tr::reconciler::notify
