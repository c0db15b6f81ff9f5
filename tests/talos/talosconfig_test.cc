#include "reconciler/clients/talos/talosconfig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/escaping.h"

namespace tr::reconciler::talos {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Framing only: the parser checks PEM labels, not the crypto inside.
constexpr char kCaPem[] = "-----BEGIN CERTIFICATE-----\nQ0FDRVJU\n-----END CERTIFICATE-----\n";
constexpr char kCrtPem[] =
    "-----BEGIN CERTIFICATE-----\nQ0xJRU5UQ0VSVA==\n-----END CERTIFICATE-----\n";
constexpr char kKeyBody[] = "U0VDUkVUS0VZTUFURVJJQUw=";  // "SECRETKEYMATERIAL"

std::string B64(std::string_view text) {
  return absl::Base64Escape(absl::string_view(text.data(), text.size()));
}

std::string Ed25519KeyPem() {
  return std::string("-----BEGIN ED25519 PRIVATE KEY-----\n") + kKeyBody +
         "\n-----END ED25519 PRIVATE KEY-----\n";
}

std::string Config(std::string_view context_body, std::string_view current = "prod") {
  return "context: " + std::string(current) + "\ncontexts:\n  prod:\n" + std::string(context_body);
}

std::string Material(std::string_view key_pem) {
  return "    ca: " + B64(kCaPem) + "\n    crt: " + B64(kCrtPem) + "\n    key: " + B64(key_pem) +
         "\n";
}

TEST(TalosConfigTest, ParsesContextAndRelabelsEd25519Key) {
  const std::string yaml = Config(
      "    endpoints: [10.0.0.11, \"10.0.0.12:50001\", \"https://[fd00::1]:50000/x\"]\n"
      "    nodes: [10.0.0.11, 10.0.0.21]\n" +
      Material(Ed25519KeyPem()));
  auto config = ParseTalosConfig(yaml, "talosconfig");
  ASSERT_TRUE(config.ok()) << config.status();
  auto context = config->Context();
  ASSERT_TRUE(context.ok()) << context.status();
  EXPECT_EQ(context->name, "prod");
  ASSERT_EQ(context->endpoints.size(), 3u);
  EXPECT_EQ(context->endpoints[0], (Endpoint{"10.0.0.11", 50000}));
  EXPECT_EQ(context->endpoints[1], (Endpoint{"10.0.0.12", 50001}));
  EXPECT_EQ(context->endpoints[2], (Endpoint{"fd00::1", 50000}));
  EXPECT_EQ(context->endpoints[2].Target(), "[fd00::1]:50000");
  EXPECT_THAT(context->nodes, ::testing::ElementsAre("10.0.0.11", "10.0.0.21"));
  EXPECT_EQ(context->ca_pem, kCaPem);
  EXPECT_EQ(context->crt_pem, kCrtPem);
  EXPECT_EQ(context->key_pem, std::string("-----BEGIN PRIVATE KEY-----\n") + kKeyBody +
                                  "\n-----END PRIVATE KEY-----\n");
}

TEST(TalosConfigTest, DeprecatedTargetIsMergedIntoEndpoints) {
  auto config = ParseTalosConfig(
      Config("    target: 10.0.0.9\n    endpoints: [10.0.0.9]\n" + Material(Ed25519KeyPem())),
      "talosconfig");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->contexts.at("prod").endpoints, (std::vector<Endpoint>{{"10.0.0.9", 50000}}));

  auto only_target =
      ParseTalosConfig(Config("    target: 10.0.0.9\n" + Material(Ed25519KeyPem())), "tc");
  ASSERT_TRUE(only_target.ok()) << only_target.status();
  EXPECT_EQ(only_target->contexts.at("prod").endpoints.size(), 1u);
}

TEST(TalosConfigTest, SelectsNamedContextAndReportsMissingOnes) {
  const std::string yaml = "context: a\ncontexts:\n  a:\n    endpoints: [10.0.0.1]\n" +
                           Material(Ed25519KeyPem()) + "  b:\n    endpoints: [10.0.0.2]\n" +
                           Material(Ed25519KeyPem());
  auto config = ParseTalosConfig(yaml, "tc");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->Context("b")->endpoints[0].host, "10.0.0.2");
  EXPECT_EQ(config->Context()->name, "a");
  EXPECT_EQ(config->Context("zzz").status().code(), absl::StatusCode::kNotFound);

  auto unnamed = ParseTalosConfig(
      "contexts:\n  a:\n    endpoints: [10.0.0.1]\n" + Material(Ed25519KeyPem()), "tc");
  ASSERT_TRUE(unnamed.ok()) << unnamed.status();
  EXPECT_EQ(unnamed->Context().status().code(), absl::StatusCode::kFailedPrecondition);
}

struct BadConfigCase {
  std::string name;
  std::string yaml;
  std::string expected;  // part of the message
};

// Test names only: the YAML holds (fake) key material that has no place in test listings.
void PrintTo(const BadConfigCase& c, std::ostream* os) { *os << c.name; }

class BadTalosConfigTest : public ::testing::TestWithParam<BadConfigCase> {};

TEST_P(BadTalosConfigTest, IsInvalidArgumentWithoutKeyMaterial) {
  auto config = ParseTalosConfig(GetParam().yaml, "/etc/talosconfig");
  ASSERT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(config.status().message());
  EXPECT_THAT(message, HasSubstr("/etc/talosconfig"));
  EXPECT_THAT(message, HasSubstr(GetParam().expected));
  EXPECT_THAT(message, Not(HasSubstr(kKeyBody)));
  EXPECT_THAT(message, Not(HasSubstr(B64(Ed25519KeyPem()).substr(0, 24))));
  EXPECT_THAT(message, Not(HasSubstr("SECRETKEY")));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadTalosConfigTest,
    ::testing::Values(
        BadConfigCase{"NotYaml", "context: [", "invalid YAML"},
        BadConfigCase{"NoContexts", "context: prod\n", "at least one context"},
        BadConfigCase{"UnknownCurrent",
                      "context: other\ncontexts:\n  prod:\n    endpoints: [1.2.3.4]\n" +
                          Material(Ed25519KeyPem()),
                      "\"other\" is not one of contexts"},
        BadConfigCase{"NoEndpoints", Config(Material(Ed25519KeyPem())),
                      "contexts.prod: endpoints: at least one endpoint"},
        BadConfigCase{"BadPort",
                      Config("    endpoints: [\"1.2.3.4:99999\"]\n" + Material(Ed25519KeyPem())),
                      "port must be a number"},
        BadConfigCase{"MissingKey",
                      Config("    endpoints: [1.2.3.4]\n    ca: " + B64(kCaPem) +
                             "\n    crt: " + B64(kCrtPem) + "\n"),
                      "contexts.prod: key: missing"},
        BadConfigCase{"KeyNotBase64",
                      Config("    endpoints: [1.2.3.4]\n    ca: " + B64(kCaPem) +
                             "\n    crt: " + B64(kCrtPem) + "\n    key: \"" + kKeyBody + "!!\"\n"),
                      "key: not valid base64"},
        BadConfigCase{"KeyNotPem", Config("    endpoints: [1.2.3.4]\n" + Material(kKeyBody)),
                      "key: decoded value is not PEM"},
        BadConfigCase{"CrtIsAKey",
                      Config("    endpoints: [1.2.3.4]\n    ca: " + B64(kCaPem) + "\n    crt: " +
                             B64(Ed25519KeyPem()) + "\n    key: " + B64(Ed25519KeyPem()) + "\n"),
                      "crt: PEM block is \"ED25519 PRIVATE KEY\", expected \"CERTIFICATE\""}),
    [](const auto& test_case) { return test_case.param.name; });

TEST(TalosConfigTest, LoadReportsUnreadableFile) {
  auto config = LoadTalosConfig("/nonexistent/talosconfig");
  EXPECT_EQ(config.status().code(), absl::StatusCode::kNotFound);
}

TEST(EndpointTest, ParsesTheFormsTalosClientsAccept) {
  EXPECT_EQ(*ParseEndpoint("cp.example"), (Endpoint{"cp.example", 50000}));
  EXPECT_EQ(*ParseEndpoint("tcp://10.1.1.1:7"), (Endpoint{"10.1.1.1", 7}));
  EXPECT_EQ(*ParseEndpoint("fd00::2"), (Endpoint{"fd00::2", 50000}));
  EXPECT_EQ(ParseEndpoint("").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseEndpoint("[fd00::1").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseEndpoint("h:0").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(NormalizeKeyPemTest, LeavesOtherLabelsAlone) {
  EXPECT_EQ(NormalizeKeyPem(kCaPem), kCaPem);
  EXPECT_EQ(NormalizeKeyPem("-----BEGIN EC PRIVATE KEY-----\nx\n-----END EC PRIVATE KEY-----\n"),
            "-----BEGIN EC PRIVATE KEY-----\nx\n-----END EC PRIVATE KEY-----\n");
}

}  // namespace
}  // namespace tr::reconciler::talos
