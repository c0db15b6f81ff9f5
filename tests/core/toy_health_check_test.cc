// A type of health check added as docs/architecture.md says ("Where a new health-check type or
// release source goes"): one struct with its type name, its keys, its decoding and its
// description, and one line, the list of types it joins; then read from YAML and described by
// the same code as the built-in types (health_check.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <variant>

#include "core/health_check.h"
#include "core/strict_yaml.h"
#include "fmt/format.h"
#include "tests/core/diagnostic_strings.h"

namespace tr::core {
namespace {

using testing::ElementsAre;
using testing::IsEmpty;

// Healthy, were it probed, when the oracle answers `answer`.
struct ToyCheck {
  static constexpr std::string_view kType = "toy";
  static constexpr std::array<std::string_view, 1> kKeys = {"answer"};

  int answer = 0;

  bool DecodeKeys(const MappingReader& m) {
    const std::optional<int64_t> value = ReadInteger(m.Required("answer"), 0, 100);
    if (value) answer = static_cast<int>(*value);
    return value.has_value();
  }
  std::string Describe() const { return fmt::format("the oracle answers {}", answer); }
};

// The one line: the built-in types and the toy.
using ToyChecks = std::variant<HttpCheck, PrometheusCheck, KubernetesCheck, ToyCheck>;

struct ToyDecoded {
  std::optional<BasicHealthCheck<ToyChecks>> check;
  std::vector<std::string> diagnostics;
};

ToyDecoded DecodeToyCheck(const std::string& yaml) {
  ParsedYaml parsed = ParseStrictYaml("c.yaml", yaml);
  DecodeContext ctx("c.yaml");
  std::optional<BasicHealthCheck<ToyChecks>> check =
      DecodeHealthCheckOf<ToyChecks>(RootField(ctx, *parsed.root));
  return {check, DiagnosticStrings(ctx.TakeDiagnostics())};
}

TEST(ToyHealthCheckTest, DecodedAndDescribedLikeTheBuiltInTypes) {
  const ToyDecoded d = DecodeToyCheck("{name: oracle, type: toy, answer: 42, timeout: 3s}");
  EXPECT_THAT(d.diagnostics, IsEmpty());
  ASSERT_TRUE(d.check.has_value());
  EXPECT_EQ(d.check->name, "oracle");
  EXPECT_EQ(d.check->timeout, std::chrono::seconds(3));
  EXPECT_EQ(CheckType(d.check->spec), "toy");
  EXPECT_EQ(DescribeCheck(d.check->spec), "the oracle answers 42");
  // A built-in type reads as before beside it.
  const ToyDecoded http = DecodeToyCheck("{name: web, type: http, url: 'http://web.test/healthz'}");
  ASSERT_TRUE(http.check.has_value()) << testing::PrintToString(http.diagnostics);
  EXPECT_EQ(DescribeCheck(http.check->spec), "GET http://web.test/healthz answers 200");
}

TEST(ToyHealthCheckTest, ItsKeysAreItsOwnAndItsTypeIsListed) {
  EXPECT_THAT(DecodeToyCheck("{name: web, type: http, url: 'http://web.test/', answer: 1}").diagnostics,
              ElementsAre("c.yaml:1:58: answer: only applies to type toy"));
  EXPECT_THAT(DecodeToyCheck("{name: oracle, type: toy, answer: 1, query: up}").diagnostics,
              ElementsAre("c.yaml:1:45: query: only applies to type prometheus"));
  EXPECT_THAT(DecodeToyCheck("{name: oracle, type: toy}").diagnostics,
              ElementsAre("c.yaml:1:1: answer: is required"));
  EXPECT_THAT(DecodeToyCheck("{name: oracle, type: oracle, url: 'http://x.test/'}").diagnostics,
              ElementsAre("c.yaml:1:22: type: must be http, prometheus, kubernetes or toy"));
}

}  // namespace
}  // namespace tr::core
