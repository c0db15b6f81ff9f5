// Listing the installer's tags from the real docker-registry (Debian's, 2.8) configured with
// `auth: token`: the registry answers 401 with its Bearer challenge, the client asks the token
// server of the test (a JWT signed with a key and self-signed certificate that openssl makes at
// test time, the certificate in the token's `x5c` header and in the registry's rootcertbundle)
// and retries with the token; a wrong credential fails clearly and is never logged.
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <atomic>
#include <sstream>

#include "core/text.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "reconciler/clients/registry/installer_tags.h"
#include "reconciler/clients/releases/release_cache.h"
#include "reconciler/runtime/logging.h"
#include "spdlog/sinks/ostream_sink.h"
#include "tests/reconciler/real_registry.h"
#include "tests/support/loopback_http.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler::registry {
namespace {

using gitsource::testing::TempDir;
using test_support::LoopbackServer;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

// base64url without padding, as JWS encodes every part (RFC 7515).
std::string Base64Url(std::string_view data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(data.data()),
                                static_cast<int>(data.size()));
  out.resize(static_cast<size_t>(n));
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

// The token server of docker's token authentication, as the test's own: an RSA key and a
// self-signed certificate made with openssl at test time; each token is an RS256 JWT carrying
// that certificate in its `x5c` header, which docker-registry verifies against its
// `rootcertbundle` (the same certificate), checking issuer, audience (the service), expiry and
// the access it grants.
class TokenIssuer {
 public:
  static constexpr char kIssuer[] = "test-token-issuer";
  static constexpr char kService[] = "registry.test";
  static constexpr char kPassword[] = "s3cret-PASSWORD";

  explicit TokenIssuer(const std::filesystem::path& dir)
      : cert_(dir / "token-cert.pem"), key_(dir / "token-key.pem") {
    gitsource::testing::MustRun({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                           key_.string(), "-out", cert_.string(), "-days", "1", "-subj",
                           "/CN=test-token-issuer"});
  }
  const std::filesystem::path& cert() const { return cert_; }

  // A token granting `actions` on `repository` for five minutes.
  std::string Mint(const std::string& repository, const std::vector<std::string>& actions) const {
    std::string der_base64;  // the PEM's body is the base64 of the DER that x5c carries
    std::istringstream pem(gitsource::testing::ReadFile(cert_));
    for (std::string line; std::getline(pem, line);) {
      if (!line.starts_with("-----")) der_base64 += line;
    }
    const nlohmann::json header = {
        {"typ", "JWT"}, {"alg", "RS256"}, {"x5c", nlohmann::json::array({der_base64})}};
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            Env::Default().Now().time_since_epoch())
                            .count();
    const nlohmann::json access = {
        {"type", "repository"}, {"name", repository}, {"actions", actions}};
    const nlohmann::json claims = {
        {"iss", kIssuer},   {"sub", "robot"},        {"aud", kService},
        {"exp", now + 300}, {"nbf", now - 10},       {"iat", now},
        {"jti", "t" + std::to_string(++minted_)}, {"access", nlohmann::json::array({access})}};
    const std::string input = Base64Url(header.dump()) + "." + Base64Url(claims.dump());
    return input + "." + Base64Url(Sign(input));
  }

  // GET /token?service=&scope=repository:<name>:<actions> with Basic robot:kPassword.
  std::unique_ptr<httplib::Server> Routes(std::atomic<int>& requests) const {
    auto s = std::make_unique<httplib::Server>();
    s->Get("/token", [this, &requests](const httplib::Request& req, httplib::Response& res) {
      ++requests;
      const std::string scope = req.get_param_value("scope");
      const size_t colon = scope.rfind(':');
      if (req.get_header_value("Authorization") !=
              httplib::make_basic_authentication_header("robot", kPassword).second ||
          req.get_param_value("service") != kService || !scope.starts_with("repository:") ||
          colon < 11) {
        res.status = 401;
        res.set_content(R"({"details":"wrong credentials"})", "application/json");
        return;
      }
      std::vector<std::string> actions;
      const std::string wanted = scope.substr(colon + 1);  // Split's views point into it
      for (auto a : core::Split(wanted, ',')) actions.emplace_back(a);
      const std::string token = Mint(scope.substr(11, colon - 11), actions);
      res.set_content(nlohmann::json{{"token", token}}.dump(), "application/json");
    });
    return s;
  }

 private:
  std::string Sign(const std::string& input) const {
    const std::string pem = gitsource::testing::ReadFile(key_);
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    size_t size = 0;
    std::string signature;
    if (key != nullptr && EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
        EVP_DigestSign(ctx, nullptr, &size, reinterpret_cast<const unsigned char*>(input.data()),
                       input.size()) == 1) {
      signature.resize(size);
      EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(signature.data()), &size,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size());
      signature.resize(size);
    }
    EVP_MD_CTX_free(ctx);
    EVP_PKEY_free(key);
    return signature;
  }

  std::filesystem::path cert_, key_;
  mutable std::atomic<int> minted_{0};
};

// The real registry with `auth: token`: 401 + Bearer challenge, our token server, retry.
class TokenAuthRegistryTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    issuer_ = new TokenIssuer(dir_->path());
    token_server_ = new LoopbackServer(issuer_->Routes(token_requests_));
    registry_ = new RealRegistry(fmt::format(
        "{{token: {{realm: 'http://127.0.0.1:{}/token', service: {}, issuer: {}, "
        "rootcertbundle: {}}}}}",
        token_server_->port(), TokenIssuer::kService, TokenIssuer::kIssuer,
        issuer_->cert().string()));
    pushed_ = registry_->running() &&
              registry_->Push("siderolabs/installer", {"v1.12.0", "v1.12.1", "latest"},
                              issuer_->Mint("siderolabs/installer", {"pull", "push"}));
  }
  static void TearDownTestSuite() {
    delete registry_;
    delete token_server_;
    delete issuer_;
    delete dir_;
  }
  void SetUp() override {
    ASSERT_TRUE(registry_->running()) << "docker-registry did not start";
    ASSERT_TRUE(pushed_) << "could not push the test image with a minted token";
  }
  InstallerRegistryOptions Options(const std::string& password) {
    gitsource::testing::WriteFile(dir_->path() / "credentials", "robot:" + password + "\n");
    auto options = ParseInstallerRegistry(registry_->origin() + "/siderolabs/installer",
                                          dir_->path() / "credentials", {});
    EXPECT_TRUE(options.ok()) << options.status();
    options->timeout = std::chrono::seconds(5);
    return *options;
  }
  static TempDir* dir_;
  static TokenIssuer* issuer_;
  static LoopbackServer* token_server_;
  static RealRegistry* registry_;
  static std::atomic<int> token_requests_;
  static bool pushed_;
};
TempDir* TokenAuthRegistryTest::dir_ = nullptr;
TokenIssuer* TokenAuthRegistryTest::issuer_ = nullptr;
LoopbackServer* TokenAuthRegistryTest::token_server_ = nullptr;
RealRegistry* TokenAuthRegistryTest::registry_ = nullptr;
std::atomic<int> TokenAuthRegistryTest::token_requests_{0};
bool TokenAuthRegistryTest::pushed_ = false;

TEST_F(TokenAuthRegistryTest, ListsTagsThroughTheBearerChallenge) {
  // Without a token the real registry answers 401 with its challenge.
  httplib::Client plain(registry_->origin());
  auto refused = plain.Get("/v2/siderolabs/installer/tags/list");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_THAT(refused->get_header_value("WWW-Authenticate"),
              HasSubstr("scope=\"repository:siderolabs/installer:pull\""));
  const int before = token_requests_;
  absl::StatusOr<std::vector<std::string>> tags = ListRegistryTags(Options(TokenIssuer::kPassword), {});
  ASSERT_TRUE(tags.ok()) << tags.status();
  EXPECT_THAT(*tags, UnorderedElementsAre("v1.12.0", "v1.12.1", "latest"));
  EXPECT_EQ(token_requests_ - before, 1);
}

TEST_F(TokenAuthRegistryTest, AWrongCredentialFailsClearlyAndTheSecretIsNeverLogged) {
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  ModuleLogger("registry")->sinks().push_back(sink);
  test_support::SimulatedEnv env;
  InstallerRegistryOptions options = Options("wrong-PASSWORD");
  releases::ReleaseCache releases(std::make_unique<TagListSource>([&](std::stop_token stop) {
                               return ListRegistryTags(options, stop);
                             }),
                             std::chrono::hours(1), env);
  const absl::Status refused = releases.Refresh({}).status();
  auto& sinks = ModuleLogger("registry")->sinks();
  sinks.erase(std::remove(sinks.begin(), sinks.end(), sink), sinks.end());
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(refused.message(), HasSubstr("HTTP 401"));
  EXPECT_THAT(refused.message(),
              HasSubstr("the token server http://127.0.0.1:" +
                        std::to_string(token_server_->port()) +
                        " refused the credentials of --installer-registry-credentials-file"));
  EXPECT_THAT(log.str(), HasSubstr("outcome=keeping-last-known"));
  for (const std::string& text : {std::string(refused.message()), log.str()}) {
    EXPECT_THAT(text, Not(HasSubstr("PASSWORD")));
    EXPECT_THAT(text, Not(HasSubstr(TokenIssuer::kPassword)));
  }
  EXPECT_TRUE(releases.Known().empty());
}

}  // namespace
}  // namespace tr::reconciler::registry
