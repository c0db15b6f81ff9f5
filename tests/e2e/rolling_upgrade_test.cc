// Rolling Talos upgrades end to end: a pushed commit bumps a profile, the real daemon upgrades
// the simulated nodes, and the simulator's journal and the status branch show how.
#include <gmock/gmock.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "tests/e2e/e2e_fixture.h"
#include "tests/support/process.h"

namespace tr::e2e {
namespace {

using core::ClusterPhase;
using core::ComponentState;

constexpr auto kReadyTimeout = 120s;

// The first journal line of `cluster` after `since` whose `what` ends with `suffix`, answered OK,
// on `node` (any when empty); 0 when there is none.
uint64_t FirstOkCall(const std::vector<JournalLine>& journal, const std::string& cluster,
                     const std::string& node, const std::string& suffix, uint64_t since = 0) {
  for (const auto& line : journal) {
    if (line.seq > since && line.call && line.cluster == cluster && line.code == "OK" &&
        (node.empty() || line.node == node) && line.what.ends_with(suffix)) {
      return line.seq;
    }
  }
  return 0;
}

// Every node was upgraded exactly once, from `from` to `to`.
void ExpectEachUpgradedOnce(const std::vector<NodeUpgradeSpan>& spans, const std::string& from,
                            const std::string& to) {
  for (const auto& span : spans) {
    SCOPED_TRACE(span.node);
    EXPECT_EQ(span.upgrade_calls_ok, 1);
    EXPECT_LE(span.upgrade_sequences, 1);
    EXPECT_EQ(span.version_changes, std::vector<std::string>{"v" + from + " -> v" + to});
  }
}

// The daemon's /metrics, checked by Prometheus's own linter (promtool: package prometheus).
std::string ScrapeCheckedMetrics(DaemonProcess& daemon) {
  auto metrics = daemon.Get("/metrics");
  EXPECT_TRUE(metrics.ok()) << metrics.status();
  if (!metrics.ok()) return "";
  EXPECT_EQ(metrics->status, 200);
  gitsource::testing::RunOptions promtool;
  promtool.input = metrics->body;
  const gitsource::testing::ProcessResult lint =
      gitsource::testing::RunCommand({"promtool", "check", "metrics"}, promtool);
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err << metrics->body;
  return metrics->body;
}

// The metric names the chart's alert rules and dashboard use (charts/talos-reconciler/files),
// the suffixes of a histogram's series taken off.
std::set<std::string> MetricsTheMonitoringNames() {
  std::string text;
  for (const char* file : {"prometheus-rules.yaml", "grafana-dashboard.json"}) {
    text += gitsource::testing::ReadFile(std::filesystem::path(TR_SOURCE_DIR) /
                                         "charts/talos-reconciler/files" / file);
  }
  std::set<std::string> names;
  const std::regex name(R"(\b(talos_reconciler_[a-z_]+|process_[a-z_]+)\b)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator();
       ++it) {
    std::string n = (*it)[1];
    for (const std::string suffix : {"_bucket", "_sum", "_count"}) {
      if (n.ends_with("_seconds" + suffix)) n.resize(n.size() - suffix.size());
    }
    names.insert(n);
  }
  return names;
}

// Brings `cluster` (already in the fleet) to Ready on `talos` under a running daemon.
void StartAt(E2eWorld& world, const std::map<std::string, ProfileDef>& profiles) {
  world.PushProfiles(profiles, "initial profiles");
  E2E_ASSERT_OK(world.StartDaemon());
  for (const auto& [cluster, profile] : profiles) {
    E2E_ASSERT_OK(world.WaitForReady(cluster, profile.talos, "", kReadyTimeout).status());
  }
}

TEST_F(E2eTest, ThreeControlPlanesAndTwoWorkersUpgradeWorkersFirstOneAtATime) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("prod", 3, 2, "1.11.6")}));
  ASSERT_NO_FATAL_FAILURE(StartAt(world(), {{"prod", AtTalos("1.11.6")}}));
  const uint64_t since = LastSeq(world().Journal());

  const std::string commit =
      world().PushProfiles({{"prod", AtTalos("1.12.0")}}, "prod: Talos 1.12.0");
  core::ClusterStatus done;
  E2E_ASSERT_OK_AND_ASSIGN(done, world().WaitForReady("prod", "1.12.0", commit, kReadyTimeout));

  const auto& journal = world().Journal();
  const auto spans = UpgradeSpans(journal, "prod", since);
  SCOPED_TRACE("journal spans:\n" + Describe(spans));
  ASSERT_EQ(spans.size(), 5u);
  // Workers first, then the control planes; one node at a time; each exactly once.
  const auto& prod = world().sim().cluster("prod");
  const std::vector<std::string> worker_names = prod.WorkerNames();
  const std::set<std::string> workers(worker_names.begin(), worker_names.end());
  EXPECT_TRUE(workers.contains(spans[0].node));
  EXPECT_TRUE(workers.contains(spans[1].node));
  EXPECT_EQ(OverlapProblem(spans), "");
  ExpectEachUpgradedOnce(spans, "1.11.6", "1.12.0");
  EXPECT_EQ(CountCalls(journal, "prod", "LifecycleService/Upgrade", "", since), 0);
  // Pre-flight: no pre-pull below 1.13 (the Upgrade call pulls, and refuses a bad image, by
  // itself), and the etcd snapshot (on by default) taken before the first control plane.
  for (const auto& node : prod.NodeNames()) {
    EXPECT_EQ(FirstOkCall(journal, "prod", node, "Pull", since), 0u) << node << ": pre-pulled";
  }
  const uint64_t snapshot = FirstOkCall(journal, "prod", "", "MachineService/EtcdSnapshot", since);
  EXPECT_NE(snapshot, 0u);
  EXPECT_LT(snapshot, spans[2].first_seq);
  // Each control plane that led etcd handed leadership over before it went down: etcd was
  // never left to elect a leader after losing one.
  EXPECT_EQ(CountStates(journal, "prod", "etcd-leader-lost", "", since), 0);
  EXPECT_GE(CountStates(journal, "prod", "etcd-leader", "handed over by", since), 1);

  // The status branch tells the story: Ready on 1.11.6, UpgradingTalos with progress and each
  // node recorded in flight before it was touched (in the journal's order), Ready on 1.12.0.
  std::vector<StatusVersion> history;
  E2E_ASSERT_OK_AND_ASSIGN(history, world().repo().StatusHistory("prod"));
  ASSERT_GE(history.size(), 3u);
  std::string story;
  for (const auto& v : history) story += "  " + Summary(v.status) + "\n";
  SCOPED_TRACE("status branch:\n" + story);
  EXPECT_EQ(history.front().status.phase, ClusterPhase::kReady);
  EXPECT_EQ(history.front().status.talos.current, "1.11.6");
  std::vector<std::string> in_flight_order;
  bool upgrading_seen = false;
  for (const auto& v : history) {
    if (v.status.phase != ClusterPhase::kUpgradingTalos) continue;
    upgrading_seen = true;
    EXPECT_EQ(v.status.talos.target, "1.12.0");
    EXPECT_EQ(v.status.talos.state, ComponentState::kInProgress);
    EXPECT_TRUE(v.status.talos.progress.ends_with("/5")) << v.status.talos.progress;
    EXPECT_EQ(v.status.desired_commit_attempted, commit);
    for (const auto& op : v.status.rollout.in_flight) {
      if (std::find(in_flight_order.begin(), in_flight_order.end(), op.node) ==
          in_flight_order.end()) {
        in_flight_order.push_back(op.node);
      }
    }
  }
  EXPECT_TRUE(upgrading_seen);
  std::vector<std::string> journal_order;
  for (const auto& span : spans) journal_order.push_back(span.node);
  EXPECT_EQ(in_flight_order, journal_order);

  EXPECT_EQ(done.talos.state, ComponentState::kCompleted);
  EXPECT_EQ(done.desired_commit_attempted, commit);
  EXPECT_TRUE(done.rollout.in_flight.empty());
  EXPECT_FALSE(done.rollout.failure.has_value());
  ASSERT_EQ(done.nodes.size(), 5u);
  for (const auto& node : done.nodes) {
    EXPECT_EQ(node.talos, "1.12.0") << node.name;
    EXPECT_TRUE(node.ready) << node.name;
  }
  for (const auto& node : prod.NodeNames()) {
    EXPECT_TRUE(std::any_of(done.history.begin(), done.history.end(),
                            [&](const auto& h) { return h.event.find(node) != std::string::npos; }))
        << "no history event names " << node;
  }
}

TEST_F(E2eTest, SingleNodeCluster) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("solo", 1, 0, "1.11.6")}));
  ASSERT_NO_FATAL_FAILURE(StartAt(world(), {{"solo", AtTalos("1.11.6")}}));
  const uint64_t since = LastSeq(world().Journal());

  const std::string commit =
      world().PushProfiles({{"solo", AtTalos("1.12.0")}}, "solo: Talos 1.12.0");
  core::ClusterStatus done;
  E2E_ASSERT_OK_AND_ASSIGN(done, world().WaitForReady("solo", "1.12.0", commit, kReadyTimeout));

  const auto spans = UpgradeSpans(world().Journal(), "solo", since);
  SCOPED_TRACE("journal spans:\n" + Describe(spans));
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].node, "solo-cp-0");
  ExpectEachUpgradedOnce(spans, "1.11.6", "1.12.0");
  ASSERT_EQ(done.nodes.size(), 1u);
  EXPECT_EQ(done.nodes[0].talos, "1.12.0");

  // The scrape of a daemon that rolled out: promtool accepts it, and it counts that rollout.
  const std::string metrics = ScrapeCheckedMetrics(world().daemon());
  for (const char* line :
       {"talos_reconciler_node_upgrades_started_total 1\n",
        "talos_reconciler_node_upgrades_total{result=\"completed\"} 1\n",
        "talos_reconciler_node_upgrade_duration_seconds_count{result=\"completed\"} 1\n",
        "talos_reconciler_cluster_phase{cluster=\"solo\",phase=\"Ready\"} 1\n",
        "talos_reconciler_cluster_phase{cluster=\"solo\",phase=\"UpgradingTalos\"} 0\n",
        "talos_reconciler_ready 1\n"}) {
    EXPECT_THAT(metrics, ::testing::HasSubstr(line));
  }
  EXPECT_THAT(metrics, ::testing::ContainsRegex(
                           "talos_reconciler_git_polls_total\\{result=\"ok\"\\} [1-9]"));
  EXPECT_THAT(metrics, ::testing::ContainsRegex(
                           "talos_reconciler_reconciles_total\\{outcome=\"requeue\"\\} [1-9]"));
  // The build, the process and the cluster's client certificate (the sim's are valid a year).
  EXPECT_THAT(metrics, ::testing::ContainsRegex("talos_reconciler_build_info\\{version=\"[0-9.]+\","
                                                "commit=\"[0-9a-f]{40}(-dirty)?\""));
  EXPECT_THAT(metrics, ::testing::ContainsRegex("\nprocess_resident_memory_bytes [1-9]"));
  EXPECT_THAT(metrics, ::testing::ContainsRegex(
                           "talos_reconciler_client_certificate_expiry_timestamp_seconds\\{cluster="
                           "\"solo\"\\} [1-9]"));
  // Every family the chart's alerts and dashboard name is in this live scrape, but for the
  // leadership gauges, which only --leader-elect renders (LeaderElection tests scrape those).
  for (const std::string& name : MetricsTheMonitoringNames()) {
    if (name == "talos_reconciler_leader" || name == "talos_reconciler_shard_owned") continue;
    EXPECT_THAT(metrics, ::testing::HasSubstr("\n# TYPE " + name + " ")) << name;
  }
}

TEST_F(E2eTest, TwoClustersUpgradeInParallel) {
  E2E_ASSERT_OK(world().StartFleet(
      {MakeCluster("alpha", 1, 2, "1.11.6"), MakeCluster("beta", 1, 2, "1.11.6")}));
  ASSERT_NO_FATAL_FAILURE(
      StartAt(world(), {{"alpha", AtTalos("1.11.6")}, {"beta", AtTalos("1.11.6")}}));
  const uint64_t since = LastSeq(world().Journal());

  const std::string commit = world().PushProfiles(
      {{"alpha", AtTalos("1.12.0")}, {"beta", AtTalos("1.12.0")}}, "both: Talos 1.12.0");
  E2E_ASSERT_OK(world().WaitForReady("alpha", "1.12.0", commit, kReadyTimeout).status());
  E2E_ASSERT_OK(world().WaitForReady("beta", "1.12.0", commit, kReadyTimeout).status());

  const auto& journal = world().Journal();
  const auto alpha = UpgradeSpans(journal, "alpha", since);
  const auto beta = UpgradeSpans(journal, "beta", since);
  SCOPED_TRACE("alpha:\n" + Describe(alpha) + "beta:\n" + Describe(beta));
  ASSERT_EQ(alpha.size(), 3u);
  ASSERT_EQ(beta.size(), 3u);
  ExpectEachUpgradedOnce(alpha, "1.11.6", "1.12.0");
  ExpectEachUpgradedOnce(beta, "1.11.6", "1.12.0");
  EXPECT_EQ(OverlapProblem(alpha), "");
  EXPECT_EQ(OverlapProblem(beta), "");
  // The two rollouts ran at the same time: each began before the other ended.
  EXPECT_LT(alpha.front().first_seq, beta.back().last_seq);
  EXPECT_LT(beta.front().first_seq, alpha.back().last_seq);
}

TEST_F(E2eTest, LegacyPathBelow113AndLifecyclePathFrom113) {
  ClusterDef lifecycle = MakeCluster("life", 1, 2, "1.13.2", "1.35.0");
  lifecycle.extra =
      "    pods:\n"
      "      - {name: web-1, namespace: default, node: life-w-0, labels: {app: web}}\n"
      "      - {name: web-2, namespace: default, node: life-w-1, labels: {app: web}}\n"
      "    pdbs:\n"
      "      - {name: web, namespace: default, selector: {app: web}, min_available: 1}\n";
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("legacy", 1, 1, "1.12.0"), lifecycle}));
  ASSERT_NO_FATAL_FAILURE(
      StartAt(world(), {{"legacy", AtTalos("1.12.0")}, {"life", AtTalos("1.13.2", {}, "1.35.0")}}));
  const uint64_t since = LastSeq(world().Journal());

  const std::string commit = world().PushProfiles(
      {{"legacy", AtTalos("1.13.9")}, {"life", AtTalos("1.13.9", {}, "1.35.0")}},
      "both: Talos 1.13.9");
  E2E_ASSERT_OK(world().WaitForReady("legacy", "1.13.9", commit, kReadyTimeout).status());
  E2E_ASSERT_OK(world().WaitForReady("life", "1.13.9", commit, kReadyTimeout).status());

  const auto& journal = world().Journal();
  // Below 1.13: MachineService/Upgrade, and nothing of the LifecycleService.
  const auto legacy = UpgradeSpans(journal, "legacy", since);
  SCOPED_TRACE("legacy:\n" + Describe(legacy));
  ASSERT_EQ(legacy.size(), 2u);
  ExpectEachUpgradedOnce(legacy, "1.12.0", "1.13.9");
  EXPECT_EQ(CountCalls(journal, "legacy", "MachineService/Upgrade", "OK", since), 2);
  EXPECT_EQ(CountCalls(journal, "legacy", "LifecycleService/Upgrade", "", since), 0);
  // 1.13 and newer: pull, install, cordon and drain through the Kubernetes API (evicting the
  // pod), reboot, uncordon; never the legacy Upgrade.
  const auto life = UpgradeSpans(journal, "life", since);
  SCOPED_TRACE("life:\n" + Describe(life));
  ASSERT_EQ(life.size(), 3u);
  ExpectEachUpgradedOnce(life, "1.13.2", "1.13.9");
  EXPECT_EQ(OverlapProblem(life), "");
  EXPECT_EQ(CountCalls(journal, "life", "MachineService/Upgrade", "", since), 0);
  EXPECT_EQ(CountCalls(journal, "life", "LifecycleService/Upgrade", "OK", since), 3);
  EXPECT_GE(CountCalls(journal, "life", "ImageService/Pull", "OK", since), 3);
  for (const auto& span : life) EXPECT_EQ(span.reboot_calls_ok, 1) << span.node;
  // LifecycleService/Upgrade does not pull: every install found the image pulled into the CRI
  // store on that node during its current boot (a reboot after the pre-pull would not matter).
  std::map<std::string, bool> pulled_this_boot;
  for (const auto& line : journal) {
    if (line.seq <= since || line.cluster != "life") continue;
    if (!line.call && line.what == "up") pulled_this_boot[line.node] = false;
    if (line.call && line.code == "OK" && line.what.ends_with("ImageService/Pull")) {
      pulled_this_boot[line.node] = true;
    }
    if (line.call && line.what.ends_with("LifecycleService/Upgrade")) {
      EXPECT_EQ(line.code, "OK") << line.node << ": " << line.detail;
      EXPECT_TRUE(pulled_this_boot[line.node]) << line.node << ": installed without a pull";
    }
  }
  int cordons = 0, uncordons = 0, evictions = 0;
  for (const auto& line : journal) {
    if (line.seq <= since || line.cluster != "life" || line.call) continue;
    cordons += line.what == "cordon";
    uncordons += line.what == "uncordon";
    evictions += line.what == "evict" && line.detail == "default/web-1";
  }
  EXPECT_GE(cordons, 3);
  EXPECT_GE(uncordons, 3);
  EXPECT_GE(evictions, 1);
}

TEST_F(E2eTest, ServesHealthReadinessMetricsAndStopsOnSigterm) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("calm", 1, 0, "1.12.0")}));
  ASSERT_NO_FATAL_FAILURE(StartAt(world(), {{"calm", AtTalos("1.12.0")}}));
  DaemonProcess& daemon = world().daemon();
  auto get = [&](const std::string& path) {
    auto reply = daemon.Get(path);
    return reply.ok() ? reply->status : 0;
  };
  EXPECT_TRUE(world().WaitUntil(30s, [&] { return get("/healthz") == 200; }));
  // The first poll succeeded long ago (the status branch says Ready).
  EXPECT_EQ(get("/readyz"), 200);
  EXPECT_THAT(ScrapeCheckedMetrics(daemon), ::testing::HasSubstr("# TYPE"));

  auto exited = daemon.Terminate(30s);
  ASSERT_TRUE(exited.ok()) << exited.status();
  EXPECT_TRUE(WIFEXITED(*exited)) << gitsource::DescribeWaitStatus(*exited);
  EXPECT_EQ(WEXITSTATUS(*exited), 0) << gitsource::DescribeWaitStatus(*exited);
}

}  // namespace
}  // namespace tr::e2e
