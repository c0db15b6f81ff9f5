// What an installer registry cannot make the tag listing do: read an answer past its cap
// (a 64 MiB tag list streamed by a registry of the test's own), keep more tags than the cap,
// or send the credentials to a token realm on another host over plain http.
#include <atomic>
#include <mutex>

#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "reconciler/clients/registry/installer_tags.h"
#include "tests/support/loopback_http.h"

namespace tr::reconciler::registry {
namespace {

using test_support::LoopbackServer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kTagsPath[] = "/v2/siderolabs/installer/tags/list";

InstallerRegistryOptions OptionsFor(int port) {
  InstallerRegistryOptions options;
  options.origin = fmt::format("http://127.0.0.1:{}", port);
  options.repository = "siderolabs/installer";
  options.timeout = std::chrono::seconds(10);
  return options;
}

TEST(RegistryLimitsTest, A64MiBTagListIsRefusedAtTheCapWithoutBeingRead) {
  constexpr size_t kTotal = size_t{64} << 20;
  std::atomic<size_t> written{0};
  auto routes = std::make_unique<httplib::Server>();
  routes->Get(kTagsPath, [&](const httplib::Request&, httplib::Response& res) {
    // Chunked, so no Content-Length gives the size away: the client must count.
    res.set_chunked_content_provider("application/json", [&](size_t, httplib::DataSink& sink) {
      static const std::string kPiece = [] {
        std::string piece;
        while (piece.size() < 65536) piece += "\"v1.0.0-build.000\",";
        return piece;
      }();
      if (written == 0 && !sink.write("{\"tags\":[", 9)) return false;
      if (!sink.write(kPiece.data(), kPiece.size())) return false;
      written += kPiece.size();
      if (written >= kTotal) sink.done();
      return true;
    });
  });
  LoopbackServer registry(std::move(routes));
  const absl::StatusOr<std::vector<std::string>> tags =
      ListRegistryTags(OptionsFor(registry.port()), {});
  EXPECT_EQ(tags.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(tags.status().message(),
              HasSubstr("the answer is larger than the cap of 4194304 bytes (4 MiB)"));
  // Had the client read on, the server would have written all 64 MiB before it returned;
  // it stopped at the cap and socket buffers hold a few MiB at most.
  EXPECT_LT(written.load(), size_t{32} << 20);
}

TEST(RegistryLimitsTest, MoreTagsThanTheCapAreRefused) {
  auto routes = std::make_unique<httplib::Server>();
  routes->Get(kTagsPath, [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"tags":["v1","v2","v3","v4","v5","v6"]})", "application/json");
  });
  LoopbackServer registry(std::move(routes));
  InstallerRegistryOptions options = OptionsFor(registry.port());
  options.max_tags = 5;
  const auto refused = ListRegistryTags(options, {});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.status().message(), HasSubstr("more than the cap of 5 tags"));
  options.max_tags = 6;
  EXPECT_TRUE(ListRegistryTags(options, {}).ok());
}

// A token realm that records the Authorization header of each request it gets.
struct Realm {
  explicit Realm(const std::string& host) {
    auto routes = std::make_unique<httplib::Server>();
    routes->Get("/token", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu);
      authorizations.push_back(req.get_header_value("Authorization"));
      res.set_content(R"({"token":"realm-token"})", "application/json");
    });
    server = std::make_unique<LoopbackServer>(std::move(routes), host);
  }
  std::vector<std::string> seen() {
    std::lock_guard lock(mu);
    return authorizations;
  }
  std::mutex mu;
  std::vector<std::string> authorizations;
  std::unique_ptr<LoopbackServer> server;
};

// A registry whose challenge names `realm`, serving tags to the realm's token.
std::unique_ptr<httplib::Server> ChallengingRegistry(std::string realm) {
  auto routes = std::make_unique<httplib::Server>();
  routes->Get(kTagsPath, [realm](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Authorization") == "Bearer realm-token") {
      res.set_content(R"({"tags":["v1.12.0"]})", "application/json");
      return;
    }
    res.status = 401;
    res.set_header("WWW-Authenticate",
                   fmt::format(R"(Bearer realm="{}",service="registry.test")", realm));
  });
  return routes;
}

// The options of a registry on `port` with robot's credentials.
InstallerRegistryOptions WithCredentials(int port) {
  InstallerRegistryOptions options = OptionsFor(port);
  options.username = "robot";
  options.password = "s3cret-PASSWORD";
  return options;
}

TEST(RegistryLimitsTest, CredentialsAreNotSentToAPlainHttpRealmOnAnotherHost) {
  Realm foreign("127.0.0.2");  // another loopback address: another host
  LoopbackServer registry(
      ChallengingRegistry(fmt::format("http://127.0.0.2:{}/token", foreign.server->port())));
  InstallerRegistryOptions options = WithCredentials(registry.port());
  const auto refused = ListRegistryTags(options, {});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(),
              HasSubstr(fmt::format("token realm http://127.0.0.2:{} is neither https nor on the "
                                    "registry's host",
                                    foreign.server->port())));
  EXPECT_THAT(refused.status().message(), Not(HasSubstr("PASSWORD")));
  EXPECT_THAT(foreign.seen(), IsEmpty());
  // Without credentials nothing can leak: the realm is asked anonymously.
  options.username.clear();
  options.password.clear();
  ASSERT_TRUE(ListRegistryTags(options, {}).ok());
  EXPECT_THAT(foreign.seen(), ElementsAre(""));
}

TEST(RegistryLimitsTest, ARealmOnTheRegistrysOwnHostGetsTheCredentials) {
  Realm own("127.0.0.1");
  LoopbackServer registry(
      ChallengingRegistry(fmt::format("http://127.0.0.1:{}/token", own.server->port())));
  const auto tags = ListRegistryTags(WithCredentials(registry.port()), {});
  ASSERT_TRUE(tags.ok()) << tags.status();
  EXPECT_THAT(*tags, ElementsAre("v1.12.0"));
  EXPECT_THAT(
      own.seen(),
      ElementsAre(httplib::make_basic_authentication_header("robot", "s3cret-PASSWORD").second));
}

}  // namespace
}  // namespace tr::reconciler::registry
