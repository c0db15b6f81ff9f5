// The webhook and notification flags of `run`, checked by FinishDaemonConfig.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "reconciler/app/daemon/daemon_config.h"
#include "tests/support/run_flags.h"

namespace tr::reconciler {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class ForgeConfigTest : public test_support::RunFlagsTest {
 protected:
  void SetUp() override {
    RunFlagsTest::SetUp();
    std::ofstream(dir_ / "secret") << "hook-secret-longer-than-16\n";
    std::ofstream(dir_ / "notify-secret") << "whsec_bm90aWZ5LWtleS1vZi10aGUtY29uZmlnLXRlc3Q=\n";
  }

  // Parses `run --repo ... <args>` and finishes it; the error message, or "".
  std::string Finish(const std::vector<std::string>& args) {
    DaemonConfig config;
    std::vector<std::string> argv = Required();
    argv.insert(argv.end(), args.begin(), args.end());
    if (std::string error = Parse(argv, config); !error.empty()) return error;
    absl::Status s = FinishDaemonConfig(config);
    config_ = config;
    return std::string(s.message());
  }

  DaemonConfig config_;
};

TEST_F(ForgeConfigTest, WebhookListenerNeedsAReadableSecret) {
  EXPECT_EQ(Finish({}), "");
  EXPECT_TRUE(config_.webhooks.listen.empty());
  EXPECT_THAT(Finish({"--webhook-listen", "127.0.0.1:9090"}), HasSubstr("--webhook-secret-file"));
  EXPECT_THAT(Finish({"--webhook-listen", "127.0.0.1:9090", "--webhook-secret-file",
                      (dir_ / "missing").string()}),
              HasSubstr("--webhook-secret-file: cannot read"));
  EXPECT_THAT(Finish({"--webhook-listen", "9090", "--webhook-secret-file",
                      (dir_ / "secret").string()}),
              HasSubstr("--webhook-listen: want host:port"));
  EXPECT_EQ(Finish({"--webhook-listen", "127.0.0.1:9090", "--webhook-secret-file",
                    (dir_ / "secret").string(), "--webhook-queue", "16"}),
            "");
  EXPECT_EQ(config_.webhooks.queue, 16);
  EXPECT_THAT(Finish({"--webhook-queue", "0"}), HasSubstr("--webhook-queue"));
}

TEST_F(ForgeConfigTest, NotifyEntriesAreCheckedAtStart) {
  EXPECT_EQ(Finish({"--notify", "url=https://a.test/x,format=json,secret-file=" +
                                    (dir_ / "notify-secret").string(),
                    "--notify", "url=https://hooks.slack.test/T/B/X,format=slack"}),
            "");
  EXPECT_EQ(config_.notify.entries.size(), 2u);
  EXPECT_THAT(Finish({"--notify", "url=https://a.test/x,format=json"}),
              HasSubstr("--notify: format=json needs secret-file="));
  // The webhook's secret is not a Standard Webhooks secret.
  EXPECT_THAT(Finish({"--notify",
                      "url=https://a.test/x,format=json,secret-file=" + (dir_ / "secret").string()}),
              HasSubstr("does not start with whsec_"));
}

TEST_F(ForgeConfigTest, ForgeFlagsNeedATokenAndAnApiUrlOffGithub) {
  const std::string token = "--forge-token-file=" + (dir_ / "secret").string();
  EXPECT_EQ(Finish({"--forge", "github", token, "--forge-repository", "acme/fleet"}), "");
  EXPECT_EQ(config_.forge.api_url, "https://api.github.com");
  EXPECT_EQ(config_.forge.comment_interval, std::chrono::seconds(10));
  EXPECT_THAT(Finish({"--forge", "bitbucket", token}), HasSubstr("--forge: want github"));
  EXPECT_THAT(Finish({"--forge", "github"}), HasSubstr("--forge-token-file: required"));
  EXPECT_THAT(Finish({"--forge", "github", "--forge-token-file", (dir_ / "missing").string()}),
              HasSubstr("--forge-token-file: cannot read"));
  EXPECT_THAT(Finish({"--forge", "gitlab", token}), HasSubstr("--forge-api-url: required for gitlab"));
  EXPECT_THAT(Finish({"--forge", "gitea", token, "--forge-api-url", "ftp://x"}),
              HasSubstr("--forge-api-url: must start with http"));
  // --repo file:///r.git names no owner/name.
  EXPECT_THAT(Finish({"--forge", "github", token}), HasSubstr("--forge-repository: want owner/name"));
  EXPECT_EQ(Finish({"--forge", "gitea", token, "--forge-api-url", "https://gitea.test/api/v1",
                    "--forge-repository", "ops/fleet", "--forge-comment-interval", "500ms"}),
            "");
  EXPECT_EQ(config_.forge.comment_interval, std::chrono::milliseconds(500));
}

TEST_F(ForgeConfigTest, TheForgeTokenGoesOverHttpsOnlyUnlessAllowed) {
  std::ofstream(dir_ / "token") << "ghp_tokenNeverInAMessage\n";
  const std::string token = "--forge-token-file=" + (dir_ / "token").string();
  const std::string refused = Finish({"--forge", "gitea", token, "--forge-api-url",
                                      "http://127.0.0.1:3000/api/v1", "--forge-repository", "o/r"});
  EXPECT_THAT(refused, HasSubstr("--forge-api-url: refusing to send the forge token over plain "
                                 "http:// (use https://, or --forge-allow-insecure-http"));
  EXPECT_THAT(refused, Not(HasSubstr("ghp_tokenNeverInAMessage")));
  EXPECT_EQ(Finish({"--forge", "gitea", token, "--forge-api-url", "http://127.0.0.1:3000/api/v1",
                    "--forge-repository", "o/r", "--forge-allow-insecure-http"}),
            "");
  EXPECT_TRUE(config_.forge.allow_insecure_http);
}

TEST_F(ForgeConfigTest, AWebhookSecretShorterThanSixteenBytesIsRefused) {
  const auto listen = [&](const std::string& secret) {
    std::ofstream(dir_ / "short") << secret << "\n";
    return Finish(
        {"--webhook-listen", "127.0.0.1:9090", "--webhook-secret-file", (dir_ / "short").string()});
  };
  const std::string refused = listen("x");
  EXPECT_THAT(refused, HasSubstr("--webhook-secret-file: secret file"));
  EXPECT_THAT(refused, HasSubstr("holds fewer than 16 bytes"));
  EXPECT_THAT(listen("fifteen-bytes-x"), HasSubstr("fewer than 16 bytes"));
  EXPECT_EQ(listen("sixteen-bytes-xx"), "");
}

}  // namespace
}  // namespace tr::reconciler
