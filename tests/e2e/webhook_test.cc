// The daemon with --webhook-listen and --notify: the poll interval is an hour, so only a
// signed push webhook (sent by GitHub's own signer under node) can make the daemon see the new
// commit; the rollout's notifications reach a real HTTP receiver, in order, and each verifies
// with the Standard Webhooks library (npm standardwebhooks) as a receiver would check it.
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <thread>

#include "fmt/format.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/signed_webhook.h"

namespace tr::e2e {
namespace {

// A receiver of format=json notifications: keeps each delivery's body and Standard Webhooks
// headers.
struct Delivery {
  std::string body, id, timestamp, signature;
  std::string Event() const {
    const nlohmann::json n = nlohmann::json::parse(body, nullptr, false);
    return n.is_object() ? n.value("event", "") : "";
  }
};

class NotificationSink {
 public:
  NotificationSink() {
    server_.Post("/n", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      deliveries_.push_back({req.body, req.get_header_value("webhook-id"),
                             req.get_header_value("webhook-timestamp"),
                             req.get_header_value("webhook-signature")});
      res.status = 204;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::jthread([this] { server_.listen_after_bind(); });
  }
  ~NotificationSink() { server_.stop(); }
  std::string Url() const { return fmt::format("http://127.0.0.1:{}/n", port_); }
  std::vector<Delivery> Deliveries() {
    std::lock_guard lock(mu_);
    return deliveries_;
  }
  std::vector<std::string> Events() {
    std::vector<std::string> events;
    for (const Delivery& d : Deliveries()) events.push_back(d.Event());
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
  E2E_ASSERT_OK(world().StartDaemon([&](DaemonOptions& o) {
    o.poll_interval = "1h";
    o.extra_args = {"--webhook-listen", fmt::format("{}:{}", host, *port),
                    "--webhook-secret-file", (world().dir() / "webhook-secret").string(),
                    "--notify",
                    "url=" + sink.Url() + ",format=json,secret-file=" +
                        (world().dir() / "notify-key").string()};
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
  // A wrong signature is refused and does not leak into the daemon's log.
  EXPECT_EQ(SendGithubWebhook(base_url, "not-the-secret", "push", payload), std::vector<int>{401});
  EXPECT_EQ(world().daemon().log().find("e2e-webhook-secret"), std::string::npos);
}

}  // namespace
}  // namespace tr::e2e
