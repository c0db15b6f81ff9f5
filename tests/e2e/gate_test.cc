// Gates that hold: a health check served by the test (a real HTTP server on loopback whose
// answer the test flips) stops the rollout between nodes, lets it go on when it passes, and
// fails it after gateTimeout, and holds a Kubernetes upgrade the same way; and promotion between
// clusters, lab → staging → prod, where a cluster starts only after the one before it has soaked.
#include <gmock/gmock.h>

#include <atomic>
#include <thread>

#include "fmt/format.h"
#include "httplib.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/support/http_listen.h"

namespace tr::e2e {
namespace {

using core::ClusterPhase;
using Clock = std::chrono::system_clock;

constexpr auto kGateTestTimeout = 120s;

// An application health endpoint of ours: GET /healthz answers 200 or 503 as the test says.
class AppHealth {
 public:
  AppHealth() {
    server_.Get("/healthz", [this](const httplib::Request&, httplib::Response& r) {
      r.status = healthy_ ? 200 : 503;
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = test_support::ListenAfterBind(server_);
  }
  ~AppHealth() {
    server_.stop();
    thread_.join();
  }
  void Set(bool healthy) { healthy_ = healthy; }
  std::string Check(const std::string& name) const {
    return fmt::format(
        "- {{name: {}, type: http, url: \"http://127.0.0.1:{}/healthz\", "
        "timeout: 2s}}",
        name, port_);
  }

 private:
  std::atomic<bool> healthy_{true};
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

std::vector<std::string> GatedPolicy(const AppHealth& app, const std::string& gate_timeout) {
  return {"settle: 2s", "gateTimeout: " + gate_timeout, "healthChecks:", "  " + app.Check("app")};
}

bool Waiting(const core::ClusterStatus& s, const std::string& commit) {
  return s.desired_commit_attempted == commit && s.phase == ClusterPhase::kWaitingForGate;
}

TEST_F(E2eTest, FailingHealthCheckHoldsTheNextNodeResumesAndTimesOut) {
  AppHealth app, broken;
  broken.Set(false);
  E2E_ASSERT_OK(world().StartFleet(
      {MakeCluster("gated", 1, 2, "1.11.6"), MakeCluster("doomed", 1, 1, "1.11.6")}));
  const std::string initial =
      world().PushProfiles({{"gated", AtTalos("1.11.6", GatedPolicy(app, "10m"))},
                            {"doomed", AtTalos("1.11.6", GatedPolicy(broken, "4s"))}},
                           "initial profiles");
  E2E_ASSERT_OK(world().StartDaemon());
  for (const char* cluster : {"gated", "doomed"}) {
    E2E_ASSERT_OK(
        world()
            .WaitForStatus(
                cluster,
                [&](const core::ClusterStatus& s) { return s.desired_commit_attempted == initial; },
                kGateTestTimeout)
            .status());
  }
  const uint64_t since = LastSeq(world().Journal());
  app.Set(false);
  const std::string commit =
      world().PushProfiles({{"gated", AtTalos("1.12.0", GatedPolicy(app, "10m"))},
                            {"doomed", AtTalos("1.12.0", GatedPolicy(broken, "4s"))}},
                           "Talos 1.12.0");

  // Failing before the first node: nothing is touched, not even a pull.
  core::ClusterStatus held;
  E2E_ASSERT_OK_AND_ASSIGN(
      held, world().WaitForStatus(
                "gated", [&](auto& s) { return Waiting(s, commit); }, kGateTestTimeout));
  EXPECT_THAT(held.message, ::testing::HasSubstr("app: HTTP 503, expected 200"));
  ASSERT_EQ(held.gates.results.size(), 1u);
  EXPECT_FALSE(held.gates.results[0].healthy);
  EXPECT_TRUE(TouchedNodes(world().Journal(), "gated", since).empty());
  EXPECT_EQ(CountCalls(world().Journal(), "gated", "ImageService/Pull", "", since), 0);

  // Passing: the first node goes; failing again after it: the next node waits.
  app.Set(true);
  E2E_ASSERT_OK(world()
                    .WaitForStatus(
                        "gated",
                        [&](const core::ClusterStatus& s) {
                          return s.desired_commit_attempted == commit &&
                                 s.talos.progress == "1/3" && s.rollout.in_flight.empty();
                        },
                        kGateTestTimeout)
                    .status());
  app.Set(false);  // within the 2 s settle
  E2E_ASSERT_OK_AND_ASSIGN(
      held, world().WaitForStatus(
                "gated", [&](auto& s) { return Waiting(s, commit); }, kGateTestTimeout));
  EXPECT_EQ(held.talos.progress, "1/3");
  const uint64_t held_at = LastSeq(world().Journal());
  ASSERT_EQ(TouchedNodes(world().Journal(), "gated", since).size(), 1u);
  // It stays held while the daemon keeps checking (two more answers recorded).
  const Clock::time_point checked = held.gates.results.at(0).checked;
  E2E_ASSERT_OK(world()
                    .WaitForStatus(
                        "gated",
                        [&](const core::ClusterStatus& s) {
                          return Waiting(s, commit) && !s.gates.results.empty() &&
                                 s.gates.results[0].checked > checked + 1s;
                        },
                        kGateTestTimeout)
                    .status());
  EXPECT_TRUE(TouchedNodes(world().Journal(), "gated", held_at).empty());

  app.Set(true);
  E2E_ASSERT_OK(world().WaitForReady("gated", "1.12.0", commit, kGateTestTimeout).status());
  const auto spans = UpgradeSpans(world().Journal(), "gated", since);
  EXPECT_EQ(spans.size(), 3u) << Describe(spans);
  EXPECT_EQ(OverlapProblem(spans), "");

  // The cluster whose check never passes fails after its 4 s gateTimeout, untouched.
  core::ClusterStatus failed;
  E2E_ASSERT_OK_AND_ASSIGN(failed, world().WaitForStatus(
                                       "doomed",
                                       [&](const core::ClusterStatus& s) {
                                         return s.desired_commit_attempted == commit &&
                                                s.phase == ClusterPhase::kUpgradeFailed;
                                       },
                                       kGateTestTimeout));
  EXPECT_THAT(failed.message, ::testing::HasSubstr("gateTimeout 4s"));
  ASSERT_TRUE(failed.rollout.failure.has_value());
  EXPECT_TRUE(TouchedNodes(world().Journal(), "doomed", since).empty());
}

// The start checks hold a Kubernetes step too: while the health check fails no kubelet and no
// control-plane component is touched; once it passes the upgrade runs to Ready.
TEST_F(E2eTest, FailingHealthCheckHoldsAKubernetesUpgrade) {
  AppHealth app;
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("kgated", 1, 1, "1.12.0", "1.34.1")}));
  const std::string initial = world().PushProfiles(
      {{"kgated", AtTalos("1.12.0", GatedPolicy(app, "10m"), "1.34.1")}}, "initial profile");
  E2E_ASSERT_OK(world().StartDaemon());
  E2E_ASSERT_OK(world().WaitForReady("kgated", "1.12.0", initial, kGateTestTimeout).status());
  const uint64_t since = LastSeq(world().Journal());
  app.Set(false);
  const std::string commit = world().PushProfiles(
      {{"kgated", AtTalos("1.12.0", GatedPolicy(app, "10m"), "1.35.0")}}, "Kubernetes 1.35.0");
  core::ClusterStatus held;
  E2E_ASSERT_OK_AND_ASSIGN(
      held, world().WaitForStatus(
                "kgated", [&](auto& s) { return Waiting(s, commit); }, kGateTestTimeout));
  EXPECT_THAT(held.message, ::testing::HasSubstr("app: HTTP 503, expected 200"));
  EXPECT_EQ(CountCalls(world().Journal(), "kgated", "MachineService/ApplyConfiguration", "", since),
            0);
  app.Set(true);
  E2E_ASSERT_OK(
      world().WaitForKubernetesReady("kgated", "1.35.0", commit, kGateTestTimeout).status());
  EXPECT_GT(CountCalls(world().Journal(), "kgated", "MachineService/ApplyConfiguration", "", since),
            0);
}

// clusters/<name>.yaml on `talos` with `promotion` (a flow mapping) under spec.
std::pair<std::string, std::string> PromotedProfile(E2eWorld& world, const std::string& name,
                                                    const std::string& talos,
                                                    const std::string& promotion) {
  std::string yaml = ProfileYaml(world.sim().cluster(name), AtTalos(talos));
  if (!promotion.empty()) yaml += "  promotion: " + promotion + "\n";
  return {ProfilePath(name), yaml};
}

TEST_F(E2eTest, PromotionChainLabThenStagingThenProdAfterSoak) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("lab", 1, 0, "1.11.6"),
                                    MakeCluster("staging", 1, 1, "1.11.6"),
                                    MakeCluster("prod", 1, 1, "1.11.6")}));
  auto files = [&](const std::string& talos) {
    return std::map<std::string, std::string>{
        PromotedProfile(world(), "lab", talos, ""),
        PromotedProfile(world(), "staging", talos, "{after: [lab], soak: 1s}"),
        PromotedProfile(world(), "prod", talos, "{after: [staging], soak: 3s}")};
  };
  const std::string initial = world().PushProfiles({}, "initial profiles", files("1.11.6"));
  E2E_ASSERT_OK(world().StartDaemon());
  for (const char* cluster : {"lab", "staging", "prod"}) {
    E2E_ASSERT_OK(world().WaitForReady(cluster, "1.11.6", initial, kGateTestTimeout).status());
  }
  const uint64_t since = LastSeq(world().Journal());
  const std::string commit = world().PushProfiles({}, "fleet: Talos 1.12.0", files("1.12.0"));
  core::ClusterStatus prod_waiting;
  E2E_ASSERT_OK_AND_ASSIGN(prod_waiting, world().WaitForStatus(
                                             "prod",
                                             [&](const core::ClusterStatus& s) {
                                               return s.desired_commit_attempted == commit &&
                                                      s.phase == ClusterPhase::kWaitingForPromotion;
                                             },
                                             kGateTestTimeout));
  EXPECT_THAT(prod_waiting.message, ::testing::StartsWith("waiting for staging ("));
  core::ClusterStatus staging, prod;
  E2E_ASSERT_OK_AND_ASSIGN(staging,
                           world().WaitForReady("staging", "1.12.0", commit, kGateTestTimeout));
  E2E_ASSERT_OK_AND_ASSIGN(prod, world().WaitForReady("prod", "1.12.0", commit, kGateTestTimeout));
  const auto lab = UpgradeSpans(world().Journal(), "lab", since);
  const auto stage = UpgradeSpans(world().Journal(), "staging", since);
  const auto production = UpgradeSpans(world().Journal(), "prod", since);
  ASSERT_EQ(lab.size(), 1u);
  ASSERT_EQ(stage.size(), 2u);
  ASSERT_EQ(production.size(), 2u);
  EXPECT_GE(stage.front().first_time, lab.back().last_time + 1s) << "staging did not soak lab";
  // Staging became Ready after its last node; prod waited out the 3 s soak from then.
  Clock::time_point staging_ready{};
  for (const core::Condition& c : staging.conditions) {
    if (c.type == "Ready") staging_ready = c.last_transition;
  }
  EXPECT_GE(staging_ready, stage.back().last_time - 1s);
  EXPECT_GE(production.front().first_time, staging_ready + 3s)
      << "prod started before staging soaked";
}

}  // namespace
}  // namespace tr::e2e
