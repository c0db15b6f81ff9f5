// The installer's release tags from an OCI registry: listing against a real registry
// (Debian's docker-registry, started here on loopback with its storage in a temporary
// directory; the test pushes a tiny OCI image under several tags through the registry's HTTP
// API), and pagination against a registry and token server of the test's own (docker-registry
// 2.8 ignores `n` and `last` on tag lists; its token auth is tested against the real one in
// registry_token_auth_test.cc). Plus the parsing of challenges, flags and tags.
#include "reconciler/clients/registry/installer_tags.h"
#include "reconciler/clients/releases/release_cache.h"

#include <atomic>
#include <fstream>
#include <optional>

#include "fmt/format.h"
#include "gitsource/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/reconciler/real_registry.h"
#include "tests/support/loopback_http.h"
#include "tests/support/process.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler::registry {
namespace {

using gitsource::testing::TempDir;
using test_support::LoopbackServer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

class RealRegistryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    registry_ = new RealRegistry();
    pushed_ = registry_->running() &&
              registry_->Push("siderolabs/installer",
                              {"v1.12.0", "v1.12.1", "v1.13.0-alpha.1", "latest", "v1.11.6"});
  }
  static void TearDownTestSuite() {
    delete registry_;
    registry_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(registry_->running()) << "docker-registry did not start";
    ASSERT_TRUE(pushed_) << "could not push the test image";
  }
  static InstallerRegistryOptions Options(const std::string& repository = "siderolabs/installer") {
    auto options = ParseInstallerRegistry(registry_->origin() + "/" + repository, {}, {});
    EXPECT_TRUE(options.ok()) << options.status();
    options->timeout = std::chrono::seconds(5);
    return *options;
  }
  static RealRegistry* registry_;
  static bool pushed_;
};
RealRegistry* RealRegistryTest::registry_ = nullptr;
bool RealRegistryTest::pushed_ = false;

TEST_F(RealRegistryTest, ListsEveryTagAndKeepsTheReleases) {
  absl::StatusOr<std::vector<std::string>> tags = ListRegistryTags(Options(), {});
  ASSERT_TRUE(tags.ok()) << tags.status();
  EXPECT_THAT(*tags,
              UnorderedElementsAre("v1.12.0", "v1.12.1", "v1.13.0-alpha.1", "latest", "v1.11.6"));
  std::vector<std::string> releases;
  for (const core::Version& v : ReleaseTags(*tags)) releases.push_back(v.ToString());
  EXPECT_THAT(releases, ElementsAre("1.11.6", "1.12.0", "1.12.1"));
}

TEST_F(RealRegistryTest, AnUnknownRepositoryIsNotFound) {
  EXPECT_EQ(ListRegistryTags(Options("siderolabs/nothing"), {}).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(RealRegistryTest, AFailedRefreshKeepsTheLastKnownReleases) {
  test_support::SimulatedEnv env;
  bool down = false;
  InstallerRegistryOptions options = Options();
  releases::ReleaseCache releases(
      std::make_unique<TagListSource>(
          [&](std::stop_token stop) -> absl::StatusOr<std::vector<std::string>> {
            if (down) options.origin = "http://127.0.0.1:1";  // nothing listens on port 1
            return ListRegistryTags(options, stop);
          }),
      std::chrono::hours(1), env);
  EXPECT_TRUE(releases.Known().empty());
  ASSERT_TRUE(releases.Refresh({}).ok());
  ASSERT_EQ(releases.Known().size(), 3u);
  down = true;
  EXPECT_EQ(releases.Refresh({}).status().code(), absl::StatusCode::kUnavailable);
  ASSERT_EQ(releases.Known().size(), 3u);
  EXPECT_EQ(releases.Known().back().ToString(), "1.12.1");
}

// A registry that wants a bearer token from a token server of its own, and pages its tags two
// at a time, as large registries do.
class TokenRegistryTest : public ::testing::Test {
 protected:
  static constexpr char kToken[] = "tok-7f3a9c";
  static constexpr char kPassword[] = "s3cret-PASSWORD";

  TokenRegistryTest() : token_server_(TokenRoutes()), registry_(RegistryRoutes()) {}

  std::unique_ptr<httplib::Server> TokenRoutes() {
    auto s = std::make_unique<httplib::Server>();
    s->Get("/token", [this](const httplib::Request& req, httplib::Response& res) {
      ++token_requests_;
      const bool allowed =
          req.get_header_value("Authorization") ==
              httplib::make_basic_authentication_header("robot", kPassword).second &&
          req.get_param_value("service") == "registry.test" &&
          req.get_param_value("scope") == "repository:siderolabs/installer:pull";
      if (!allowed) {
        res.status = 401;
        return;
      }
      res.set_content(fmt::format(R"({{"token":"{}","expires_in":300}})", kToken),
                      "application/json");
    });
    return s;
  }

  std::unique_ptr<httplib::Server> RegistryRoutes() {
    auto s = std::make_unique<httplib::Server>();
    s->Get("/v2/siderolabs/installer/tags/list", [this](const httplib::Request& req,
                                                        httplib::Response& res) {
      if (req.get_header_value("Authorization") != std::string("Bearer ") + kToken) {
        res.status = 401;
        res.set_header(
            "WWW-Authenticate",
            fmt::format("Bearer realm=\"http://127.0.0.1:{}/token\",service="
                        "\"registry.test\",scope=\"repository:siderolabs/installer:pull\"",
                        token_server_.port()));
        return;
      }
      const std::vector<std::string> all = {"v1.10.8", "v1.11.6", "v1.12.0", "v1.12.2", "v1.13.1"};
      const size_t n = std::stoul(req.get_param_value("n"));
      const std::string last = req.get_param_value("last");
      size_t from = 0;
      while (!last.empty() && from < all.size() && all[from] <= last) ++from;
      const size_t to = std::min(all.size(), from + std::min<size_t>(n, 2));
      SetTags(res, std::vector<std::string>(all.begin() + from, all.begin() + to));
      if (to < all.size()) {
        res.set_header("Link", fmt::format("</v2/siderolabs/installer/tags/list?n={}&last={}>; "
                                           "rel=\"next\"",
                                           n, all[to - 1]));
      }
    });
    return s;
  }

  static void SetTags(httplib::Response& res, const std::vector<std::string>& tags) {
    std::string list;
    for (const std::string& t : tags) list += (list.empty() ? "\"" : ",\"") + t + "\"";
    res.set_content(R"({"name":"siderolabs/installer","tags":[)" + list + "]}", "application/json");
  }

  InstallerRegistryOptions Options(const std::string& password) {
    TempDir dir;
    gitsource::testing::WriteFile(dir / "credentials", "robot:" + password + "\n");
    auto options = ParseInstallerRegistry(
        fmt::format("http://127.0.0.1:{}/siderolabs/installer", registry_.port()),
        dir / "credentials", {});
    EXPECT_TRUE(options.ok()) << options.status();
    options->timeout = std::chrono::seconds(5);
    return *options;
  }

  std::atomic<int> token_requests_{0};
  LoopbackServer token_server_;
  LoopbackServer registry_;
};

TEST_F(TokenRegistryTest, GetsATokenFromTheRealmAndFollowsEveryPage) {
  absl::StatusOr<std::vector<std::string>> tags = ListRegistryTags(Options(kPassword), {});
  ASSERT_TRUE(tags.ok()) << tags.status();
  EXPECT_THAT(*tags, ElementsAre("v1.10.8", "v1.11.6", "v1.12.0", "v1.12.2", "v1.13.1"));
  EXPECT_EQ(token_requests_, 1);  // one token for every page
}

TEST_F(TokenRegistryTest, AWrongPasswordIsUnauthenticatedAndNeverEchoed) {
  absl::StatusOr<std::vector<std::string>> tags = ListRegistryTags(Options("wrong-PASSWORD"), {});
  EXPECT_EQ(tags.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(tags.status().message(), Not(HasSubstr("PASSWORD")));
}

TEST_F(TokenRegistryTest, ATruncatedListingStopsAtMaxPages) {
  InstallerRegistryOptions options = Options(kPassword);
  options.max_pages = 2;
  absl::StatusOr<std::vector<std::string>> tags = ListRegistryTags(options, {});
  ASSERT_TRUE(tags.ok()) << tags.status();
  EXPECT_EQ(tags->size(), 4u);
}

TEST(InstallerTagsTest, ParsesBearerAndBasicChallenges) {
  std::optional<Challenge> c = ParseChallenge(
      R"(Bearer realm="https://auth.example.com/token",service="registry.example.com",scope="repository:a/b:pull,push")");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->scheme, "bearer");
  EXPECT_EQ(c->realm, "https://auth.example.com/token");
  EXPECT_EQ(c->service, "registry.example.com");
  EXPECT_EQ(c->scope, "repository:a/b:pull,push");
  c = ParseChallenge(R"(Basic realm="Registry Realm")");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->scheme, "basic");
  EXPECT_EQ(c->realm, "Registry Realm");
  EXPECT_FALSE(ParseChallenge(R"(Bearer realm="unterminated)").has_value());
}

TEST(InstallerTagsTest, OnlyExactReleaseTagsAreReleases) {
  std::vector<std::string> kept;
  for (const core::Version& v :
       ReleaseTags({"v1.12.0", "1.12.3", "v1.12", "v1.13.0-beta.0", "v1.11.6-3-gabcdef1", "latest",
                    "sha256-abc.sig", "v1.12.0", "v1.9.6"})) {
    kept.push_back(v.ToString());
  }
  EXPECT_THAT(kept, ElementsAre("1.9.6", "1.12.0"));
}

TEST(InstallerTagsTest, RegistryFlagsAreChecked) {
  auto ok =
      ParseInstallerRegistry("https://registry.example.com:5000/siderolabs/installer/", {}, {});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->origin, "https://registry.example.com:5000");
  EXPECT_EQ(ok->repository, "siderolabs/installer");
  for (const char* bad : {"ftp://registry.example.com/a", "https://registry.example.com",
                          "https://registry.example.com/", "registry.example.com/a",
                          "https://user:pw@registry.example.com/a"}) {
    EXPECT_EQ(ParseInstallerRegistry(bad, {}, {}).status().code(),
              absl::StatusCode::kInvalidArgument)
        << bad;
  }
  TempDir dir;
  gitsource::testing::WriteFile(dir / "creds", "no-colon-here\n");
  auto malformed = ParseInstallerRegistry("https://registry.example.com/a", dir / "creds", {});
  EXPECT_EQ(malformed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(malformed.status().message(), Not(HasSubstr("no-colon-here")));
  EXPECT_EQ(
      ParseInstallerRegistry("https://registry.example.com/a", dir / "missing", {}).status().code(),
      absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tr::reconciler::registry
