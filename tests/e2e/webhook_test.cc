// The daemon with --webhook-listen and --notify: the poll interval is an hour, so only a
// signed push webhook (sent by GitHub's own signer under node) can make the daemon see the new
// commit; the rollout's notifications reach a real HTTP receiver, in order, and each verifies
// with the Standard Webhooks library (npm standardwebhooks) as a receiver would check it. The
// same rollout reaches a receiver per chat format (teams, mattermost, googlechat), each body
// passing the tool's own package (tests/forge/check_chat_payload.mjs).
#include <gmock/gmock.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "fmt/format.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/signed_webhook.h"
#include "tests/support/chat_payload_check.h"
#include "tests/support/fake_chat.h"

namespace tr::e2e {
namespace {

// A receiver of notifications on any path: keeps each delivery's path, body, Standard Webhooks
// headers and messageReplyOption (googlechat's).
struct Delivery {
  std::string path, body, id, timestamp, signature, reply_option;
  std::string Event() const {
    const nlohmann::json n = nlohmann::json::parse(body, nullptr, false);
    return n.is_object() ? n.value("event", "") : "";
  }
};

class NotificationSink {
 public:
  NotificationSink() {
    server_.Post("/[a-z]+", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      deliveries_.push_back({req.path, req.body, req.get_header_value("webhook-id"),
                             req.get_header_value("webhook-timestamp"),
                             req.get_header_value("webhook-signature"),
                             req.get_param_value("messageReplyOption")});
      res.status = 204;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::jthread([this] { server_.listen_after_bind(); });
  }
  ~NotificationSink() { server_.stop(); }
  std::string Url(const std::string& path = "/n") const {
    return fmt::format("http://127.0.0.1:{}{}", port_, path);
  }
  std::vector<Delivery> Deliveries(const std::string& path = "/n") {
    std::lock_guard lock(mu_);
    std::vector<Delivery> to_path;
    for (const Delivery& d : deliveries_) {
      if (d.path == path) to_path.push_back(d);
    }
    return to_path;
  }
  std::vector<std::string> Events() {
    std::vector<std::string> events;
    for (const Delivery& d : Deliveries()) events.push_back(d.Event());
    return events;
  }
  // The events a chat format's receiver at /<format> got, read from each card's title
  // ("hooked: rollout.started").
  std::vector<std::string> ChatEvents(const std::string& format) {
    std::vector<std::string> events;
    for (const Delivery& d : Deliveries("/" + format)) {
      const nlohmann::json b = nlohmann::json::parse(d.body, nullptr, false);
      const nlohmann::json::json_pointer title(
          format == "teams"                                   ? "/attachments/0/content/body/0/items/0/text"
          : format == "mattermost" || format == "completed" ? "/attachments/0/title"
                                                              : "/cardsV2/0/card/header/title");
      const std::string text = b.contains(title) ? b[title].get<std::string>() : "";
      events.push_back(text.substr(text.find(": ") + 2));
    }
    return events;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<Delivery> deliveries_;
  std::jthread thread_;
};

TEST_F(E2eTest, PushWebhookPollsAtOnceAndTheRolloutIsNotified) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("hooked", 1, 1, "1.11.6")}));
  world().PushProfiles({{"hooked", AtTalos("1.11.6", {"settle: 0s"})}}, "initial profile");
  const std::string host = world().sim().address_prefix() + ".251";
  auto port = FreePort(host);
  E2E_ASSERT_OK(port.status());
  std::ofstream(world().dir() / "webhook-secret") << "e2e-webhook-secret\n";
  constexpr char kNotifySecret[] = "whsec_ZTJlLW5vdGlmeS1rZXktb2YtdGhpcy10ZXN0LTMyYg==";
  std::ofstream(world().dir() / "notify-key") << kNotifySecret << "\n";
  NotificationSink sink;
  NotificationSink chats;  // a second receiver: /teams, /mattermost, /googlechat, /completed
  const std::vector<std::string> kChatFormats{"teams", "mattermost", "googlechat"};
  // Slack's Web API and a Discord webhook: one message per rollout, edited as it goes.
  fake_chat::FakeChat chat("xoxb-e2e-bot-token", "C0E2ECHAN");
  std::ofstream(world().dir() / "slack-token") << "xoxb-e2e-bot-token\n";
  E2E_ASSERT_OK(world().StartDaemon([&](DaemonOptions& o) {
    o.poll_interval = "1h";
    o.extra_args = {"--webhook-listen", fmt::format("{}:{}", host, *port),
                    "--webhook-secret-file", (world().dir() / "webhook-secret").string(),
                    "--notify",
                    "url=" + sink.Url() + ",format=json,secret-file=" +
                        (world().dir() / "notify-key").string()};
    for (const std::string& format : kChatFormats) {
      o.extra_args.push_back("--notify");
      o.extra_args.push_back("url=" + chats.Url("/" + format) + ",format=" + format);
    }
    for (const std::string& entry :
         {"url=" + chat.SlackUrl() + ",format=slack-bot,channel=C0E2ECHAN,threads=nodes,token-file=" +
              (world().dir() / "slack-token").string(),
          "url=" + chat.DiscordUrl() + ",format=discord",
          "url=" + chats.Url("/slack") + ",format=slack",
          // Filters: only this cluster's completions; and failures only (none here).
          "url=" + chats.Url("/completed") + ",format=mattermost,event=rollout.completed,cluster=hook*",
          "url=" + chats.Url("/failures") + ",format=mattermost,min-severity=error"}) {
      o.extra_args.push_back("--notify");
      o.extra_args.push_back(entry);
    }
  }));
  E2E_ASSERT_OK(world().WaitForReady("hooked", "1.11.6", "", 60s).status());

  const std::string commit =
      world().PushProfiles({{"hooked", AtTalos("1.12.0", {"settle: 0s"})}}, "hooked: 1.12.0");
  const auto payload = world().dir() / "push.json";
  std::ofstream(payload) << nlohmann::json{{"ref", "refs/heads/main"}, {"after", commit}}.dump();
  const std::string base_url = fmt::format("http://{}:{}", host, *port);
  EXPECT_EQ(SendGithubWebhook(base_url, "e2e-webhook-secret", "push", payload),
            std::vector<int>{202});
  // Much less than the hour-long poll interval: the webhook made the daemon poll.
  E2E_ASSERT_OK(world().WaitForReady("hooked", "1.12.0", commit, 120s).status());

  ASSERT_TRUE(world().WaitUntil(30s, [&] {
    const auto events = sink.Events();
    return !events.empty() && events.back() == "rollout.completed";
  })) << testing::PrintToString(sink.Events());
  const auto events = sink.Events();
  ASSERT_EQ(events.size(), 4u) << testing::PrintToString(events);
  EXPECT_EQ(events[0], "rollout.started");
  EXPECT_EQ(events[1], "node.upgraded");
  EXPECT_EQ(events[2], "node.upgraded");
  EXPECT_EQ(events[3], "rollout.completed");
  // Each delivery verifies with the Standard Webhooks library, as a receiver checks it.
  for (const Delivery& d : sink.Deliveries()) {
    const auto body = world().dir() / ("notification-" + d.id);
    std::ofstream(body, std::ios::binary) << d.body;
    const std::string verify = fmt::format(
        "node '{0}/tests/forge/verify_standard_webhook.mjs' '{0}/.cache/forge-npm/node_modules' "
        "'{1}' '{2}' '{3}' '{4}' '{5}'",
        TR_SOURCE_DIR, kNotifySecret, body.string(), d.id, d.timestamp, d.signature);
    EXPECT_EQ(std::system(verify.c_str()), 0) << d.Event() << " " << d.signature;
  }
  // Each chat receiver got the same events, in its format, each body passing its tool's check.
  ASSERT_TRUE(world().WaitUntil(30s, [&] {
    for (const std::string& format : kChatFormats) {
      if (chats.ChatEvents(format).size() < events.size()) return false;
    }
    return true;
  }));
  for (const std::string& format : kChatFormats) {
    EXPECT_EQ(chats.ChatEvents(format), events) << format;
    std::vector<std::string> bodies;
    for (const Delivery& d : chats.Deliveries("/" + format)) bodies.push_back(d.body);
    const auto check = test_support::CheckChatPayloads(format, bodies, world().dir());
    EXPECT_TRUE(check.passed) << check.output;
  }
  // Google Chat is asked to reply into the rollout's one thread.
  std::set<std::string> threads;
  for (const Delivery& d : chats.Deliveries("/googlechat")) {
    EXPECT_EQ(d.reply_option, "REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD");
    threads.insert(nlohmann::json::parse(d.body)["thread"]["threadKey"].get<std::string>());
  }
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_THAT(*threads.begin(),
              testing::StartsWith("talos-reconciler/hooked/" + commit + "/talos-1.12.0/kubernetes-"));

  // Slack: one message for the rollout, edited to its end, a reply per node in its thread;
  // Discord: one message, edited to its end. Every call within the documented limits.
  const auto last_words = [](const fake_chat::ChatMessage& m) {
    return m.service == "slack" ? m.content.value("text", "")
                                : m.content["embeds"][0].value("description", "");
  };
  ASSERT_TRUE(world().WaitUntil(30s, [&] {
    int done = 0, replies = 0;
    for (const auto& m : chat.Messages()) {
      if (!m.thread.empty()) {
        ++replies;
      } else if (last_words(m).find("completed") != std::string::npos) {
        ++done;
      }
    }
    return done == 2 && replies == 2;
  })) << chat.Messages().size();
  std::map<std::string, std::string> top_level;  // service -> id
  for (const auto& m : chat.Messages()) {
    if (!m.thread.empty()) continue;
    EXPECT_FALSE(top_level.contains(m.service)) << "a second message on " << m.service;
    top_level[m.service] = m.id;
    EXPECT_GE(m.edits, 1) << m.service;
  }
  for (const auto& m : chat.Messages()) {
    if (!m.thread.empty()) {
      EXPECT_EQ(m.thread, top_level["slack"]);
    }
  }
  EXPECT_EQ(chat.Calls("chat.postMessage"), 3);  // the rollout's message and two replies
  EXPECT_EQ(chat.Calls("discord.execute"), 1);
  EXPECT_THAT(chat.Problems(), testing::IsEmpty());
  EXPECT_EQ(world().daemon().log().find("xoxb-e2e-bot-token"), std::string::npos);
  // The incoming-webhook Slack: one line per event, naming it after the cluster.
  ASSERT_TRUE(world().WaitUntil(30s, [&] { return chats.Deliveries("/slack").size() >= events.size(); }));
  const auto slack_lines = chats.Deliveries("/slack");
  ASSERT_EQ(slack_lines.size(), events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    const auto body = nlohmann::json::parse(slack_lines[i].body);
    ASSERT_EQ(body.size(), 1u) << slack_lines[i].body;  // {"text": ...} and nothing else
    EXPECT_THAT(body["text"].get<std::string>(), testing::StartsWith("*hooked* " + events[i]));
  }
  // The filtered receivers: the completion alone; no failure, so nothing.
  ASSERT_TRUE(world().WaitUntil(30s, [&] { return !chats.Deliveries("/completed").empty(); }));
  EXPECT_EQ(chats.ChatEvents("completed"), std::vector<std::string>{"rollout.completed"});
  EXPECT_TRUE(chats.Deliveries("/failures").empty());

  // A wrong signature is refused and does not leak into the daemon's log.
  EXPECT_EQ(SendGithubWebhook(base_url, "not-the-secret", "push", payload), std::vector<int>{401});
  EXPECT_EQ(world().daemon().log().find("e2e-webhook-secret"), std::string::npos);
}

}  // namespace
}  // namespace tr::e2e
