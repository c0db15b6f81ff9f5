// Logs you can follow: values are written so that no value can forge a field or a line, and the
// lines of one reconcile share its cluster and reconcile id.
#include "reconciler/runtime/logging.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include "nlohmann/json.hpp"
#include "reconciler/loop/controller.h"
#include "spdlog/sinks/ostream_sink.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

// The key=value fields of a line's message, read as a log reader would: a value is a bare
// token or a double-quoted string with backslash escapes.
std::vector<std::pair<std::string, std::string>> Fields(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> fields;
  size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && text[at] == ' ') ++at;
    const size_t eq = text.find('=', at);
    if (eq == std::string::npos) break;
    std::string key = text.substr(at, eq - at), value;
    at = eq + 1;
    if (at < text.size() && text[at] == '"') {
      for (++at; at < text.size() && text[at] != '"'; ++at) {
        if (text[at] != '\\' || at + 1 == text.size()) {
          value += text[at];
          continue;
        }
        const char escaped = text[++at];
        value += escaped == 'n' ? '\n' : escaped == 'r' ? '\r' : escaped == 't' ? '\t' : escaped;
      }
      ++at;  // the closing quote
    } else {
      while (at < text.size() && text[at] != ' ') value += text[at++];
    }
    fields.emplace_back(std::move(key), std::move(value));
  }
  return fields;
}

TEST(LogValueTest, PlainTokensStayBareEverythingElseIsQuotedAndEscaped) {
  EXPECT_EQ(LogValue("prod-eu-1"), "prod-eu-1");
  EXPECT_EQ(LogValue("10.0.0.2:50000"), "10.0.0.2:50000");
  EXPECT_EQ(LogValue(""), "\"\"");
  EXPECT_EQ(LogValue("two words"), "\"two words\"");
  EXPECT_EQ(LogValue("say \"hi\""), "\"say \\\"hi\\\"\"");
  EXPECT_EQ(LogValue("a\\b"), "\"a\\\\b\"");
  EXPECT_EQ(LogValue("line\nnext\r\tx"), "\"line\\nnext\\r\\tx\"");
  EXPECT_EQ(LogValue(std::string("bell\x07") + '\x7f'), "\"bell\\x07\\x7f\"");
  EXPECT_EQ(LogValue("k=v"), "\"k=v\"");
}

TEST(LogValueTest, AMessageCannotForgeAFieldOrALine) {
  const std::string hostile = "refused\" cluster=other reconcile=0 level=\"x\n2026 error forged";
  const std::string line = "step=observe error=" + LogValue(hostile) + " class=retry";
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_THAT(Fields(line),
              ElementsAre(Pair("step", "observe"), Pair("error", hostile), Pair("class", "retry")));
}

// Logs two lines per reconcile to the "rollout" logger, as the rollout reconciler does.
class LoggingReconciler final : public ClusterReconciler {
 public:
  ReconcileOutcome Reconcile(const std::string& cluster, std::stop_token) override {
    ModuleLogger("rollout")->info("step=observe nodes=3");
    ModuleLogger("rollout")->info("step=act node={}", LogValue(cluster + "-w1"));
    return ReconcileOutcome::Done();
  }
};

TEST(ReconcileLogTest, TheLinesOfOneReconcileShareItsClusterAndId) {
  std::ostringstream captured;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(captured);
  sink->set_formatter(LogLineFormatter());
  auto logger = ModuleLogger("rollout");
  logger->sinks().push_back(sink);
  logger->set_level(spdlog::level::info);
  test_support::SimulatedEnv env;
  LoggingReconciler reconciler;
  Controller controller({}, reconciler, env);
  controller.Enqueue("prod");
  controller.Enqueue("lab x");  // a name that needs quoting
  ASSERT_EQ(controller.RunDue(), 2);
  controller.Enqueue("prod");
  ASSERT_EQ(controller.RunDue(), 1);
  logger->info("step=outside");  // no reconcile: no reconcile fields
  logger->sinks().pop_back();

  // reconcile id -> the clusters and the number of its lines.
  std::map<std::string, std::vector<std::string>> by_id;
  std::istringstream lines(captured.str());
  std::vector<std::string> all;
  for (std::string line; std::getline(lines, line);) all.push_back(line);
  ASSERT_EQ(all.size(), 7u) << captured.str();
  for (size_t i = 0; i + 1 < all.size(); ++i) {
    // `<time> info rollout cluster=.. reconcile=.. step=..`
    const std::string message = all[i].substr(all[i].find(" rollout ") + 9);
    const auto fields = Fields(message);
    ASSERT_GE(fields.size(), 3u) << all[i];
    EXPECT_EQ(fields[0].first, "cluster") << all[i];
    EXPECT_EQ(fields[1].first, "reconcile") << all[i];
    EXPECT_EQ(fields[2].first, "step") << all[i];
    by_id[fields[1].second].push_back(fields[0].second);
  }
  ASSERT_EQ(by_id.size(), 3u) << captured.str();  // three reconciles, three ids
  std::vector<std::string> clusters;
  for (const auto& [id, names] : by_id) {
    ASSERT_EQ(names.size(), 2u) << id;
    EXPECT_EQ(names[0], names[1]) << id;
    clusters.push_back(names[0]);
  }
  std::sort(clusters.begin(), clusters.end());
  EXPECT_THAT(clusters, ElementsAre("lab x", "prod", "prod"));
  EXPECT_THAT(all.back(), ::testing::EndsWith(" rollout step=outside"));
}

// The parser the JSON lines use reads every value LogValue writes back as it was.
TEST(LogFieldsTest, ParsesWhatLogValueWrites) {
  const std::string hostile = "refused\" cluster=other\n\x01 \\ end";
  auto fields = ParseLogFields("step=observe error=" + LogValue(hostile) + " class=retry");
  ASSERT_TRUE(fields.has_value());
  EXPECT_THAT(*fields,
              ElementsAre(Pair("step", "observe"), Pair("error", hostile), Pair("class", "retry")));
  EXPECT_FALSE(ParseLogFields("not fields at all").has_value());
  EXPECT_FALSE(ParseLogFields("step=\"unclosed").has_value());
}

// --log-format json: one object a line, the reconcile's cluster and id and the message's fields
// as members; a hostile value stays inside its member.
TEST(ReconcileLogTest, JsonLinesCarryTheReconcileAndTheFields) {
  std::ostringstream captured;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(captured);
  sink->set_formatter(JsonLogLineFormatter());
  auto logger = ModuleLogger("rollout");
  logger->sinks().push_back(sink);
  logger->set_level(spdlog::level::info);
  {
    ReconcileLogScope scope("prod", "0badcafe");
    logger->info("step=observe error={}", LogValue("a\" reconcile=forged"));
  }
  logger->warn("free text, no fields");
  logger->sinks().pop_back();
  std::istringstream lines(captured.str());
  std::string first, second;
  ASSERT_TRUE(std::getline(lines, first) && std::getline(lines, second)) << captured.str();
  const nlohmann::json a = nlohmann::json::parse(first);
  EXPECT_EQ(a["level"], "info");
  EXPECT_EQ(a["module"], "rollout");
  EXPECT_EQ(a["cluster"], "prod");
  EXPECT_EQ(a["reconcile"], "0badcafe");
  EXPECT_EQ(a["step"], "observe");
  EXPECT_EQ(a["error"], "a\" reconcile=forged");
  EXPECT_THAT(a["time"].get<std::string>(), ::testing::MatchesRegex("[0-9-]+T[0-9:.]+Z"));
  const nlohmann::json b = nlohmann::json::parse(second);
  EXPECT_EQ(b["msg"], "free text, no fields");
  EXPECT_FALSE(b.contains("cluster"));
}

TEST(LogThrottleTest, OneLinePerKeyPerIntervalAndTheNextSaysHowManyWereHeldBack) {
  test_support::SimulatedEnv env;
  LogThrottle throttle(std::chrono::seconds(1), env);
  EXPECT_EQ(throttle.Admit("bad_signature"), 0u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(throttle.Admit("bad_signature"), std::nullopt);
  EXPECT_EQ(throttle.Admit("malformed"), 0u);  // keys are throttled apart
  env.Advance(std::chrono::milliseconds(999));
  EXPECT_EQ(throttle.Admit("bad_signature"), std::nullopt);
  env.Advance(std::chrono::milliseconds(1));
  EXPECT_EQ(throttle.Admit("bad_signature"), 1001u);
  EXPECT_EQ(throttle.Admit("bad_signature"), std::nullopt);
  env.Advance(std::chrono::seconds(5));
  EXPECT_EQ(throttle.Admit("bad_signature"), 1u);
  EXPECT_EQ(throttle.Admit("malformed"), 0u);
}

}  // namespace
}  // namespace tr::reconciler
