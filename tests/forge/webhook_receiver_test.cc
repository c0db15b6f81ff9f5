// The webhook receiver over real HTTP on loopback, driven by an independent sender
// (GitHub's own signing library under node) with real GitHub payloads and GitLab/Gitea
// payloads of the documented shape (Forgejo sends Gitea's).
#include "reconciler/features/webhooks/webhook_receiver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sstream>

#include "base/hmac.h"
#include "fmt/format.h"
#include "httplib.h"
#include "reconciler/runtime/logging.h"
#include "spdlog/sinks/ostream_sink.h"
#include "tests/forge/forge_test_support.h"

namespace tr::reconciler::webhooks {
namespace {

using forge::PullRequestAction;
using forge::WebhookEvent;
using forge::WebhookKind;
using forge_test::SendWebhooks;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSecret[] = "s3cret-for-tests-only";

class WebhookReceiverTest : public testing::Test {
 protected:
  void StartReceiver(size_t queue_capacity, std::string branch = "master") {
    queue_ = std::make_unique<WebhookQueue>(queue_capacity);
    WebhookReceiverOptions options;
    options.listen = "127.0.0.1:0";
    options.secret = kSecret;
    options.branch = std::move(branch);
    options.limits.request_deadline = std::chrono::seconds(1);
    auto receiver = WebhookReceiver::Start(options, *queue_, metrics_, Env::Default());
    ASSERT_TRUE(receiver.ok()) << receiver.status();
    receiver_ = *std::move(receiver);
    base_url_ = "http://127.0.0.1:" + std::to_string(receiver_->port());
  }

  std::vector<WebhookEvent> Drain() {
    std::vector<WebhookEvent> events;
    std::stop_source stop;
    while (queue_->Size() > 0) events.push_back(*queue_->Pop(stop.get_token()));
    return events;
  }

  // POSTs `body` to /hooks/github signed by our own HMAC (for cases the sender cannot make).
  httplib::Result PostGithub(const std::string& delivery, const std::string& body) {
    httplib::Client client("127.0.0.1", receiver_->port());
    httplib::Headers headers{{"X-GitHub-Event", "push"},
                             {"X-GitHub-Delivery", delivery},
                             {"X-Hub-Signature-256", "sha256=" + HmacSha256Hex(kSecret, body)}};
    return client.Post("/hooks/github", headers, body, "application/json");
  }

  Metrics metrics_;
  std::unique_ptr<WebhookQueue> queue_;
  std::unique_ptr<WebhookReceiver> receiver_;
  std::string base_url_;
};

TEST_F(WebhookReceiverTest, GithubPushesToTheWatchedBranchAreQueuedOthersIgnored) {
  StartReceiver(64);
  auto replies = SendWebhooks(base_url_, kSecret, "github", "push", "examples:push");
  ASSERT_EQ(replies.size(), 7u);
  int queued = 0;
  for (const auto& reply : replies) {
    const bool watched = reply["ref"] == "refs/heads/master";
    EXPECT_EQ(reply["status"], watched ? 202 : 200) << reply.dump();
    queued += watched;
  }
  std::vector<WebhookEvent> events = Drain();
  ASSERT_EQ(events.size(), static_cast<size_t>(queued));
  for (const WebhookEvent& e : events) {
    EXPECT_EQ(e.kind, WebhookKind::kPush);
    EXPECT_EQ(e.ref, "refs/heads/master");
    EXPECT_EQ(e.after.size(), 40u);
  }
  EXPECT_EQ(metrics_.webhook_requests.Value("accepted"), static_cast<uint64_t>(queued));
  EXPECT_EQ(metrics_.webhook_requests.Value("ignored"), replies.size() - queued);
}

TEST_F(WebhookReceiverTest, GithubPullRequestsOpenedUpdatedReopenedClosedAreQueued) {
  StartReceiver(64);
  auto replies =
      SendWebhooks(base_url_, kSecret, "github", "pull_request", "examples:pull_request");
  ASSERT_GE(replies.size(), 20u);
  size_t queued = 0;
  for (const auto& reply : replies) {
    const std::string action = reply["action"];
    // Closed too: its preview ref is dropped from the mirror.
    const bool acted =
        action == "opened" || action == "reopened" || action == "synchronize" || action == "closed";
    EXPECT_EQ(reply["status"], acted ? 202 : 200) << reply.dump();
    queued += acted;
  }
  std::vector<WebhookEvent> events = Drain();
  ASSERT_EQ(events.size(), queued);
  for (const WebhookEvent& e : events) {
    EXPECT_EQ(e.kind, WebhookKind::kPullRequest);
    EXPECT_EQ(e.number, 2);
    EXPECT_EQ(e.base_branch, "master");
    EXPECT_EQ(e.head_sha.size(), 40u);
    EXPECT_NE(e.action, PullRequestAction::kOther);
  }
}

TEST_F(WebhookReceiverTest, PingAndUnhandledEventsAreAnsweredWith200AndIgnored) {
  StartReceiver(64);
  for (const char* event : {"ping", "issues", "star"}) {
    auto replies =
        SendWebhooks(base_url_, kSecret, "github", event, std::string("examples:") + event);
    ASSERT_FALSE(replies.empty()) << event;
    for (const auto& reply : replies) EXPECT_EQ(reply["status"], 200) << event;
  }
  SendWebhooks(base_url_, kSecret, "gitea", "issues", forge_test::PayloadPath("gitea/issues.json"));
  SendWebhooks(base_url_, kSecret, "gitlab", "Pipeline Hook",
               forge_test::PayloadPath("gitlab/pipeline.json"));
  EXPECT_EQ(queue_->Size(), 0u);
  EXPECT_EQ(metrics_.webhook_requests.Value("accepted"), 0u);
}

TEST_F(WebhookReceiverTest, GiteaPushAndPullRequestsIncludingMerge) {
  StartReceiver(64, "main");
  for (const char* name :
       {"push", "pull_request_opened", "pull_request_synchronized", "pull_request_merged"}) {
    const std::string event = std::string(name) == "push" ? "push" : "pull_request";
    auto replies = SendWebhooks(base_url_, kSecret, "gitea", event,
                                forge_test::PayloadPath(std::string("gitea/") + name + ".json"));
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_EQ(replies[0]["status"], 202) << name;
  }
  std::vector<WebhookEvent> events = Drain();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].after, "4d6f8a0c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e");
  EXPECT_EQ(events[1].action, PullRequestAction::kOpened);
  EXPECT_EQ(events[2].action, PullRequestAction::kUpdated);
  EXPECT_EQ(events[2].head_sha, "8a0c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a6c");
  EXPECT_EQ(events[3].action, PullRequestAction::kMerged);
  EXPECT_EQ(events[3].number, 7);
  EXPECT_EQ(events[3].merge_commit, "a0c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e4a6c8");
}

// Forgejo's deliveries at /hooks/forgejo, signed by the independent sender as Forgejo signs
// (X-Forgejo-Signature, with the X-Gitea-* headers alongside).
TEST_F(WebhookReceiverTest, ForgejoSignedPushAndPullRequestAreQueuedWronglySignedRefused) {
  StartReceiver(64, "main");
  for (const char* name : {"push", "pull_request_opened"}) {
    const std::string event = std::string(name) == "push" ? "push" : "pull_request";
    auto replies = SendWebhooks(base_url_, kSecret, "forgejo", event,
                                forge_test::PayloadPath(std::string("gitea/") + name + ".json"));
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_EQ(replies[0]["status"], 202) << name;
  }
  auto wrong = SendWebhooks(base_url_, "not-the-secret-7f3a", "forgejo", "push",
                            forge_test::PayloadPath("gitea/push.json"));
  ASSERT_EQ(wrong.size(), 1u);
  EXPECT_EQ(wrong[0]["status"], 401);
  // Forgejo's own header is the one checked: a right X-Gitea-Signature does not rescue it.
  const std::string body = R"({"ref":"refs/heads/main","after":"abc"})";
  httplib::Client client("127.0.0.1", receiver_->port());
  auto mixed = client.Post("/hooks/forgejo",
                           {{"X-Forgejo-Event", "push"},
                            {"X-Forgejo-Delivery", "mixed-1"},
                            {"X-Forgejo-Signature", HmacSha256Hex("not-the-secret-7f3a", body)},
                            {"X-Gitea-Signature", HmacSha256Hex(kSecret, body)}},
                           body, "application/json");
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->status, 401);
  std::vector<WebhookEvent> events = Drain();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].forge, "forgejo");
  EXPECT_EQ(events[0].kind, WebhookKind::kPush);
  EXPECT_EQ(events[0].after, "4d6f8a0c2e4a6c8e0a2c4e6a8c0e2a4c6e8a0c2e");
  EXPECT_EQ(events[1].kind, WebhookKind::kPullRequest);
  EXPECT_EQ(events[1].action, PullRequestAction::kOpened);
  EXPECT_EQ(metrics_.webhook_requests.Value("bad_signature"), 2u);
}

TEST_F(WebhookReceiverTest, GitlabPushAndMergeRequestsIncludingMerge) {
  StartReceiver(64, "main");
  const std::pair<const char*, const char*> deliveries[] = {
      {"Push Hook", "push"},
      {"Merge Request Hook", "merge_request_open"},
      {"Merge Request Hook", "merge_request_update"},
      {"Merge Request Hook", "merge_request_merge"}};
  for (const auto& [event, name] : deliveries) {
    auto replies = SendWebhooks(base_url_, kSecret, "gitlab", event,
                                forge_test::PayloadPath(std::string("gitlab/") + name + ".json"));
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_EQ(replies[0]["status"], 202) << name;
  }
  std::vector<WebhookEvent> events = Drain();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].ref, "refs/heads/main");
  EXPECT_EQ(events[1].number, 12);
  EXPECT_EQ(events[1].action, PullRequestAction::kOpened);
  EXPECT_EQ(events[2].action, PullRequestAction::kUpdated);
  EXPECT_EQ(events[3].action, PullRequestAction::kMerged);
  EXPECT_EQ(events[3].merge_commit, "c1d3e5f7a9b1c3d5e7f9a1b3c5d7e9f1a3b5c7d9");
}

TEST_F(WebhookReceiverTest, BadSignaturesGet401AreCountedAndNeverLogged) {
  StartReceiver(64);
  std::ostringstream log_text;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text);
  ModuleLogger("webhook")->sinks().push_back(sink);
  ModuleLogger("webhook")->set_level(spdlog::level::trace);
  constexpr char kWrong[] = "not-the-secret-7f3a";
  auto github = SendWebhooks(base_url_, kWrong, "github", "push", "examples:push");
  ASSERT_EQ(github.size(), 7u);
  for (const auto& reply : github) EXPECT_EQ(reply["status"], 401);
  EXPECT_EQ(SendWebhooks(base_url_, kWrong, "gitea", "push",
                         forge_test::PayloadPath("gitea/push.json"))[0]["status"],
            401);
  EXPECT_EQ(SendWebhooks(base_url_, kWrong, "gitlab", "Push Hook",
                         forge_test::PayloadPath("gitlab/push.json"))[0]["status"],
            401);
  // GitHub's legacy SHA-1 header alone is not enough.
  httplib::Client client("127.0.0.1", receiver_->port());
  auto sha1_only =
      client.Post("/hooks/github", {{"X-GitHub-Event", "push"}, {"X-Hub-Signature", "sha1=00"}},
                  R"({"ref":"refs/heads/master","after":"BODY-MARKER"})", "application/json");
  ASSERT_TRUE(sha1_only);
  EXPECT_EQ(sha1_only->status, 401);
  EXPECT_EQ(metrics_.webhook_requests.Value("bad_signature"), 10u);
  EXPECT_EQ(queue_->Size(), 0u);
  ModuleLogger("webhook")->flush();
  ModuleLogger("webhook")->sinks().pop_back();
  EXPECT_THAT(log_text.str(), HasSubstr("outcome=rejected"));
  EXPECT_THAT(log_text.str(), Not(HasSubstr("BODY-MARKER")));
  EXPECT_THAT(log_text.str(), Not(HasSubstr(kSecret)));
  EXPECT_THAT(log_text.str(), Not(HasSubstr(kWrong)));
}

TEST_F(WebhookReceiverTest, ReplayedDeliveryIsAnsweredButQueuedOnce) {
  StartReceiver(64, "main");
  auto replies = SendWebhooks(base_url_, kSecret, "gitea", "push",
                              forge_test::PayloadPath("gitea/push.json"), /*repeat=*/3);
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[0]["status"], 202);
  EXPECT_EQ(replies[1]["status"], 200);
  EXPECT_EQ(replies[2]["status"], 200);
  EXPECT_EQ(Drain().size(), 1u);
  EXPECT_EQ(metrics_.webhook_requests.Value("duplicate"), 2u);
}

// A captured signed delivery replayed under new delivery ids (the id is not signed) is taken
// once: the rest are answered as duplicates without being parsed or queued. An id longer than
// any forge sends is refused, and neither it nor its length is kept.
TEST_F(WebhookReceiverTest, AReplayUnderNewDeliveryIdsIsTakenOnce) {
  StartReceiver(64);
  const std::string body = R"({"ref":"refs/heads/master","after":"captured"})";
  for (int i = 0; i < 300; ++i) {
    auto res = PostGithub(fmt::format("00000000-0000-4000-8000-{:012d}", i), body);
    ASSERT_TRUE(res) << i;
    ASSERT_EQ(res->status, i == 0 ? 202 : 200) << i;
  }
  EXPECT_EQ(Drain().size(), 1u);
  EXPECT_EQ(metrics_.webhook_requests.Value("duplicate"), 299u);

  auto long_id = PostGithub(std::string(1024, 'x'), R"({"ref":"refs/heads/master","after":"new"})");
  ASSERT_TRUE(long_id);
  EXPECT_EQ(long_id->status, 400);
  EXPECT_EQ(queue_->Size(), 0u);
}

// A correctly signed body that is not a push payload: 400, counted as malformed, not queued.
TEST_F(WebhookReceiverTest, SignedButMalformedIs400AndCounted) {
  StartReceiver(4);
  auto res = PostGithub("malformed-1", "not json at all");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(metrics_.webhook_requests.Value("malformed"), 1u);
  EXPECT_EQ(metrics_.webhook_requests.Value("accepted"), 0u);
  EXPECT_EQ(queue_->Size(), 0u);
}

TEST_F(WebhookReceiverTest, FloodFillsTheQueueThen503AndARetryIsTakenOnceThereIsRoom) {
  StartReceiver(4);
  // Twenty different pushes (one body replayed would be a duplicate).
  auto body = [](int i) {
    return R"({"ref":"refs/heads/master","after":"abc)" + std::to_string(i) + R"("})";
  };
  std::vector<int> statuses;
  for (int i = 0; i < 20; ++i) {
    auto res = PostGithub("flood-" + std::to_string(i), body(i));
    ASSERT_TRUE(res) << i;
    statuses.push_back(res->status);
  }
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 202), 4);
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 503), 16);
  EXPECT_EQ(metrics_.webhook_requests.Value("queue_full"), 16u);
  EXPECT_EQ(Drain().size(), 4u);
  auto retry = PostGithub("flood-19", body(19));  // refused before, so not remembered
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->status, 202);
}

TEST_F(WebhookReceiverTest, DeclaredOversizedBodyGets413WithoutReadingIt) {
  StartReceiver(4);
  const int fd = forge_test::ConnectLoopback(receiver_->port());
  ASSERT_GE(fd, 0);
  // Headers only: a receiver that waited for the 50 MiB would not answer before the deadline.
  ASSERT_TRUE(forge_test::SendAll(fd,
                                  "POST /hooks/github HTTP/1.1\r\nHost: x\r\n"
                                  "X-GitHub-Event: push\r\nContent-Type: application/json\r\n"
                                  "Content-Length: 52428800\r\n\r\n"));
  auto reply = forge_test::ReadUntilClosed(fd, Env::Default().Now() + std::chrono::seconds(30));
  ::close(fd);
  ASSERT_TRUE(reply.has_value());
  EXPECT_THAT(*reply, HasSubstr("HTTP/1.1 413"));
  EXPECT_EQ(metrics_.webhook_requests.Value("too_large"), 1u);
}

TEST_F(WebhookReceiverTest, ChunkedBodyPastTheCapGets413) {
  StartReceiver(4);
  const int fd = forge_test::ConnectLoopback(receiver_->port());
  ASSERT_GE(fd, 0);
  std::jthread writer([fd] {
    forge_test::SendAll(fd,
                        "POST /hooks/github HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: push\r\n"
                        "Transfer-Encoding: chunked\r\n\r\n");
    const std::string chunk = "10000\r\n" + std::string(0x10000, ' ') + "\r\n";
    for (int i = 0; i < 24 && forge_test::SendAll(fd, chunk); ++i) {
    }
  });
  auto reply = forge_test::ReadUntilClosed(fd, Env::Default().Now() + std::chrono::seconds(30));
  writer.join();
  ::close(fd);
  ASSERT_TRUE(reply.has_value());
  EXPECT_THAT(*reply, HasSubstr("HTTP/1.1 413"));
  EXPECT_EQ(metrics_.webhook_requests.Value("too_large"), 1u);
}

TEST_F(WebhookReceiverTest, StalledHeadersAreDroppedAfterTheReadTimeout) {
  StartReceiver(4);
  const int fd = forge_test::ConnectLoopback(receiver_->port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(forge_test::SendAll(fd, "POST /hooks/github HTTP/1.1\r\nHost: x\r\n"));
  // The receiver closes the connection once a read waits longer than 1s.
  auto reply = forge_test::ReadUntilClosed(fd, Env::Default().Now() + std::chrono::seconds(30));
  ::close(fd);
  EXPECT_TRUE(reply.has_value());
  EXPECT_EQ(queue_->Size(), 0u);
}

// The probe of issue 23 with the listener's default caps: 200 idle and 50 slowloris
// connections from one peer neither starve it nor delay a signed delivery from another.
TEST_F(WebhookReceiverTest, IdleAndSlowConnectionsFromOnePeerDoNotDelayASignedDelivery) {
  queue_ = std::make_unique<WebhookQueue>(4);
  WebhookReceiverOptions options;
  options.listen = "127.0.0.1:0";
  options.secret = kSecret;
  options.branch = "master";
  options.limits.request_deadline = std::chrono::minutes(5);  // nobody is cut during the test
  auto receiver = WebhookReceiver::Start(options, *queue_, metrics_, Env::Default());
  ASSERT_TRUE(receiver.ok()) << receiver.status();
  receiver_ = *std::move(receiver);
  std::vector<int> attackers;
  for (int i = 0; i < 250; ++i) {
    const int fd = forge_test::ConnectLoopbackFrom("127.0.0.2", receiver_->port());
    ASSERT_GE(fd, 0) << i;
    if (i >= 200) forge_test::SendAll(fd, "POST /hooks/github HTTP/1.1\r\nHo");
    attackers.push_back(fd);
  }
  auto res = PostGithub("under-load", R"({"ref":"refs/heads/master","after":"abc"})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 202);
  EXPECT_EQ(Drain().size(), 1u);
  // The peer's first connections up to the cap (64) are held, the rest were answered 503 at
  // once.
  ASSERT_EQ(options.limits.max_connections_per_peer, 64u);
  EXPECT_EQ(metrics_.webhook_requests.Value("peer_connections"), 250u - 64u);
  for (int fd : attackers) ::close(fd);
}

// The head of the server's first answer on `fd` (up to the blank line); "" on timeout.
std::string ReadHead(int fd) {
  std::string head;
  char c;
  while (head.find("\r\n\r\n") == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 30'000) <= 0 || ::recv(fd, &c, 1, 0) != 1) return head;
    head += c;
  }
  return head;
}

// Issue 49, finding 3: one address holding 16 silent bodies, each declared at 1 MiB (the whole
// 16 MiB budget of bodies in flight), does not keep another address's signed deliveries out.
TEST_F(WebhookReceiverTest, SilentBodiesFromOneAddressLeaveRoomForSignedDeliveries) {
  queue_ = std::make_unique<WebhookQueue>(64);
  WebhookReceiverOptions options;
  options.listen = "127.0.0.1:0";
  options.secret = kSecret;
  options.branch = "master";
  auto receiver =
      WebhookReceiver::Start(options, *queue_, metrics_, Env::Default());  // the defaults
  ASSERT_TRUE(receiver.ok()) << receiver.status();
  receiver_ = *std::move(receiver);
  ASSERT_EQ(options.limits.max_bodies_in_flight_bytes, size_t{16} << 20);
  std::vector<int> attackers;
  int held = 0;
  for (int i = 0; i < 16; ++i) {
    const int fd = forge_test::ConnectLoopbackFrom("127.0.0.2", receiver_->port());
    ASSERT_GE(fd, 0) << i;
    attackers.push_back(fd);
    // Expect: 100-continue makes the server say whether it holds the body before any is sent.
    ASSERT_TRUE(forge_test::SendAll(fd,
                                    "POST /hooks/github HTTP/1.1\r\nHost: x\r\n"
                                    "X-GitHub-Event: push\r\nContent-Length: 1048576\r\n"
                                    "Expect: 100-continue\r\n\r\n"));
    const std::string head = ReadHead(fd);
    if (head.starts_with("HTTP/1.1 100")) {
      ++held;
    } else {
      EXPECT_THAT(head, ::testing::StartsWith("HTTP/1.1 503")) << i;
    }
  }
  // Signed deliveries from 127.0.0.1 while the held bodies stay silent.
  for (int i = 0; i < 20; ++i) {
    const auto sent = Env::Default().Now();
    auto res = PostGithub(fmt::format("honest-{}", i),
                          fmt::format(R"({{"ref":"refs/heads/master","after":"honest{}"}})", i));
    ASSERT_TRUE(res) << i;
    EXPECT_EQ(res->status, 202) << i;
    EXPECT_LT(Env::Default().Now() - sent, std::chrono::seconds(1)) << i;
  }
  EXPECT_EQ(Drain().size(), 20u);
  // One address holds a quarter of the budget: four bodies; the other twelve were refused.
  EXPECT_EQ(held, 4);
  EXPECT_EQ(metrics_.webhook_requests.Value("peer_busy"), 12u);
  for (int fd : attackers) ::close(fd);
}

// Issue 49, finding 10: a flood of badly signed requests is counted in full but logged at
// most once a second, each line naming the peer.
TEST_F(WebhookReceiverTest, AFloodOfBadSignaturesIsCountedButLoggedAtABoundedRateWithThePeer) {
  StartReceiver(4);
  std::ostringstream log_text;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text);
  ModuleLogger("webhook")->sinks().push_back(sink);
  const std::string body = R"({"ref":"refs/heads/master","after":"flood"})";
  const std::string request = "POST /hooks/github HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: push\r\n"
                              "X-Hub-Signature-256: sha256=" + std::string(64, '0') +
                              "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" +
                              body;
  std::string pipelined;
  for (int i = 0; i < 100; ++i) pipelined += request;  // a kept connection's 100 requests
  const auto started = Env::Default().Now();
  size_t answers = 0;
  for (int c = 0; c < 20; ++c) {
    const int fd = forge_test::ConnectLoopbackFrom("127.0.0.2", receiver_->port());
    ASSERT_GE(fd, 0) << c;
    ASSERT_TRUE(forge_test::SendAll(fd, pipelined));
    auto reply = forge_test::ReadUntilClosed(fd, Env::Default().Now() + std::chrono::seconds(30));
    ::close(fd);
    ASSERT_TRUE(reply.has_value()) << c;
    for (size_t at = reply->find("HTTP/1.1 401"); at != std::string::npos;
         at = reply->find("HTTP/1.1 401", at + 1)) {
      ++answers;
    }
  }
  const auto seconds = std::chrono::ceil<std::chrono::seconds>(Env::Default().Now() - started);
  ModuleLogger("webhook")->flush();
  ModuleLogger("webhook")->sinks().pop_back();
  EXPECT_EQ(answers, 2000u);
  EXPECT_EQ(metrics_.webhook_requests.Value("bad_signature"), 2000u);
  std::istringstream lines(log_text.str());
  int logged = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("outcome=rejected") == std::string::npos) continue;
    ++logged;
    EXPECT_THAT(line, HasSubstr("peer=127.0.0.2"));
  }
  EXPECT_GE(logged, 1);
  EXPECT_LE(logged, seconds.count() + 1) << "in " << seconds.count() << " s";
}

// Issue 49, finding 10: a signature sent as a trailer after a chunked body is no signature: the
// request is refused before any handler sees it.
TEST_F(WebhookReceiverTest, ASignatureInATrailerIsNotAccepted) {
  StartReceiver(4);
  const std::string body = R"({"ref":"refs/heads/master","after":"trailer"})";
  const int fd = forge_test::ConnectLoopback(receiver_->port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(forge_test::SendAll(
      fd, fmt::format("POST /hooks/github HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: push\r\n"
                      "X-GitHub-Delivery: trailer-1\r\nTransfer-Encoding: chunked\r\n"
                      "Connection: close\r\n\r\n{:x}\r\n{}\r\n0\r\n"
                      "X-Hub-Signature-256: sha256={}\r\n\r\n",
                      body.size(), body, HmacSha256Hex(kSecret, body))));
  auto reply = forge_test::ReadUntilClosed(fd, Env::Default().Now() + std::chrono::seconds(30));
  ::close(fd);
  ASSERT_TRUE(reply.has_value());
  EXPECT_THAT(*reply, ::testing::StartsWith("HTTP/1.1 400"));
  EXPECT_EQ(queue_->Size(), 0u);
  EXPECT_EQ(metrics_.webhook_requests.Value("accepted"), 0u);
}

TEST(WebhookReceiverStartTest, RefusesAnEmptySecretAndABadAddress) {
  Metrics metrics;
  WebhookQueue queue(1);
  WebhookReceiverOptions options;
  options.listen = "127.0.0.1:0";
  EXPECT_EQ(WebhookReceiver::Start(options, queue, metrics, Env::Default()).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.secret = "x";
  options.listen = "127.0.0.1";
  EXPECT_EQ(WebhookReceiver::Start(options, queue, metrics, Env::Default()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tr::reconciler::webhooks
