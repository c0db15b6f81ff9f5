// The probers of the health checks, registered by type (reconciler/operations/gates/probers.h).
#include "reconciler/operations/gates/probers.h"

#include <gtest/gtest.h>

#include <string_view>
#include <variant>
#include <vector>

namespace tr::reconciler::gates {
namespace {

template <typename... Types>
std::vector<std::string_view> TypesOf(const std::variant<Types...>*) {
  return {Types::kType...};
}

TEST(ProbersTest, EveryTypeOfCheckHasAProber) {
  for (std::string_view type : TypesOf(static_cast<const core::HealthCheckSpec*>(nullptr))) {
    EXPECT_TRUE(ProberFor(type)) << type;
  }
  EXPECT_FALSE(ProberFor("no-such-type"));
}

TEST(ProbersTest, ATypeHasOneProberAndAnotherIsRegisteredByItsName) {
  const Prober answer = [](const core::HealthCheck& check, const ProbeScope&) {
    return ProbeAnswer{true, "asked " + check.name};
  };
  EXPECT_EQ(RegisterProber("http", answer).code(), absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(RegisterProber("oracle", answer).ok());
  ASSERT_TRUE(ProberFor("oracle"));
  EXPECT_EQ(RegisterProber("oracle", answer).code(), absl::StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace tr::reconciler::gates
