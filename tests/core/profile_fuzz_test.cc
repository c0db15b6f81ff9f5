// Property: whatever random mutation a valid profile suffers, decoding never crashes and
// either succeeds with a profile that still satisfies the validation rules, or returns
// diagnostics that each name the file, a position inside it and a message. Deterministic
// (fixed seeds); run under ASan + UBSan by scripts/test.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/observed_decode.h"
#include "core/profile_decode.h"

namespace tr::core {
namespace {

constexpr std::string_view kFuzzPath = "clusters/prod-eu-1.yaml";

constexpr std::string_view kValidProfile = R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: ClusterProfile
metadata:
  name: prod-eu-1   # must match the file name
spec:
  endpoints: [10.0.0.11, "10.0.0.12:50000"]
  credentials: prod-eu-1
  talos:
    version: 1.12.0
    image: factory.talos.dev/metal-installer/376567988ad370138ad8
  kubernetes: {version: "1.35.0"}
  nodes:
    - {name: cp-0, address: 10.0.0.11, role: controlplane}
    - name: cp-1
      address: 10.0.0.12
      role: controlplane
    - {name: w-0, address: 10.0.1.21, role: worker}
  policy:
    maxParallelWorkers: 2
    nodeTimeout: 30m
    settle: 1m30s
    windows:
      - {days: [Sat, Sun], start: "02:00", duration: 4h, timezone: Europe/Oslo}
    healthChecks:
      - {name: api, type: prometheus, url: "http://prom:9090", query: 'up{job="x"}', max: 1}
    onFailure: halt
    upgradeOrder: talos-first
)";

// Fragments that YAML and our decoder treat specially.
constexpr std::string_view kTokens[] = {"&a ",
                                        "*a",
                                        "!!str ",
                                        "!x ",
                                        "[",
                                        "]",
                                        "{",
                                        "}",
                                        "- ",
                                        ": ",
                                        ",",
                                        "---\n",
                                        "...\n",
                                        "\n",
                                        "\t",
                                        "#",
                                        "'",
                                        "\"",
                                        "? ",
                                        "|\n",
                                        ">-\n",
                                        "~",
                                        "null",
                                        "true",
                                        "1.2",
                                        "-1",
                                        "0x10",
                                        "\\",
                                        "%",
                                        "@",
                                        "`",
                                        "\xC0\xAF",
                                        "\xED\xA0\x80",
                                        "\xF4\x90\x80\x80",
                                        "\xFF",
                                        "\x00",
                                        "\x1B",
                                        "\xC2\x85",
                                        "\xEF\xBB\xBF",
                                        "  ",
                                        "<<: ",
                                        "99999999999999999999",
                                        "\r\n"};

std::string Mutate(std::string text, std::mt19937& rng) {
  auto pick = [&rng](size_t n) { return std::uniform_int_distribution<size_t>(0, n)(rng); };
  const int steps = 1 + static_cast<int>(pick(3));
  for (int step = 0; step < steps; ++step) {
    const size_t at = pick(text.size());
    switch (pick(5)) {
      case 0:  // overwrite a byte
        if (!text.empty()) text[std::min(at, text.size() - 1)] = static_cast<char>(pick(255));
        break;
      case 1:  // insert a random byte
        text.insert(at, 1, static_cast<char>(pick(255)));
        break;
      case 2:  // delete a short range
        text.erase(at, pick(16));
        break;
      case 3: {  // duplicate a range somewhere else
        const size_t from = pick(text.size());
        const std::string chunk = text.substr(from, pick(64));
        text.insert(pick(text.size()), chunk);
        break;
      }
      default: {  // insert a special token
        const std::string_view token = kTokens[pick(std::size(kTokens) - 1)];
        text.insert(at, token.empty() ? std::string_view("\0", 1) : token);
        break;
      }
    }
  }
  return text;
}

int LineCount(std::string_view text) {
  return 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

void CheckValidProfile(const ClusterProfile& p) {
  EXPECT_EQ(p.name, "prod-eu-1");
  EXPECT_FALSE(p.endpoints.empty());
  EXPECT_FALSE(p.credentials.empty());
  EXPECT_FALSE(p.talos_image.empty());
  EXPECT_TRUE(std::any_of(p.nodes.begin(), p.nodes.end(),
                          [](const NodeSpec& n) { return n.role == NodeRole::kControlPlane; }));
  EXPECT_GE(p.policy.max_parallel_workers, 1);
  EXPECT_GT(p.policy.node_timeout.count(), 0);
}

TEST(ProfileFuzzTest, TheUnmutatedProfileIsValid) {
  Decoded<ClusterProfile> decoded = DecodeClusterProfile(kFuzzPath, kValidProfile, {});
  ASSERT_TRUE(decoded.ok()) << (decoded.diagnostics.empty() ? ""
                                                            : decoded.diagnostics[0].ToString());
  CheckValidProfile(*decoded.value);
}

TEST(ProfileFuzzTest, RandomMutationsEndInAProfileOrPositionedDiagnostics) {
  std::mt19937 rng(20240611);
  int valid = 0;
  int invalid = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::string text = Mutate(std::string(kValidProfile), rng);
    Decoded<ClusterProfile> decoded = DecodeClusterProfile(kFuzzPath, text, {});
    if (decoded.ok()) {
      ++valid;
      EXPECT_TRUE(decoded.diagnostics.empty());
      CheckValidProfile(*decoded.value);
      continue;
    }
    ++invalid;
    ASSERT_FALSE(decoded.diagnostics.empty()) << "iteration " << i;
    const int lines = LineCount(text);
    for (const Diagnostic& d : decoded.diagnostics) {
      SCOPED_TRACE(testing::Message() << "iteration " << i << ": " << d.ToString());
      EXPECT_EQ(d.file, kFuzzPath);
      EXPECT_FALSE(d.message.empty());
      EXPECT_GE(d.line, 1);
      EXPECT_LE(d.line, lines);
      EXPECT_GE(d.column, 1);
      EXPECT_EQ(d.message.find('\n'), std::string::npos);
      EXPECT_EQ(d.path.find('\n'), std::string::npos);
    }
    if (testing::Test::HasFailure()) return;  // one failing input is enough to debug
  }
  // The mutations hit both outcomes, so both branches of the property are exercised.
  EXPECT_GT(valid, 10);
  EXPECT_GT(invalid, 1000);
}

TEST(ProfileFuzzTest, ObservedStateSurvivesTheSameMutations) {
  constexpr std::string_view kObservedSeed =
      "clusters:\n  prod-eu-1:\n    nodes:\n"
      "      cp-0: {talos: 1.11.6, kubelet: 1.34.1, ready: true, etcdLeader: true}\n"
      "      w-0:  {talos: 1.11.6, kubelet: 1.34.1, stage: rebooting, lastUpgradeDuration: 5m}\n"
      "    self: w-0\n";
  std::mt19937 rng(7);
  for (int i = 0; i < 1500; ++i) {
    const std::string text = Mutate(std::string(kObservedSeed), rng);
    Decoded<ObservedFleet> decoded = DecodeObservedFleet("observed.yaml", text);
    EXPECT_NE(decoded.ok(), !decoded.diagnostics.empty());
    for (const Diagnostic& d : decoded.diagnostics) {
      EXPECT_GE(d.line, 1) << i << ": " << d.ToString();
      EXPECT_GE(d.column, 1) << i << ": " << d.ToString();
    }
    if (testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace tr::core
