// Kubernetes upgrades run by the daemon end to end: a multi-hop change (Talos 1.10 / Kubernetes
// 1.33 → Talos 1.12 / Kubernetes 1.35) runs its Talos and Kubernetes hops in a valid order, and a
// daemon killed with SIGKILL during a Kubernetes upgrade resumes it with nothing applied twice,
// and its Slack (bot) and Discord messages of the rollout stay one each; Talos 1.14 clusters,
// generated and partly migrated, upgrade Kubernetes wherever their configuration keeps it.
#include <gmock/gmock.h>

#include <fstream>

#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/operator_checkout.h"
#include "tests/support/fake_chat.h"

namespace tr::e2e {
namespace {

constexpr auto kTimeout = 180s;

// Sequence numbers of the journal's "version" changes (Talos) and kubelet restarts of `cluster`.
struct Hops {
  std::vector<uint64_t> talos;    // a node came up on a new Talos version
  std::vector<uint64_t> kubelet;  // a kubelet restarted on a new version
  std::map<std::string, int> applies;
};

Hops HopsOf(const std::vector<JournalLine>& journal, const std::string& cluster, uint64_t since) {
  Hops h;
  for (const auto& line : journal) {
    if (line.cluster != cluster || line.seq <= since) continue;
    if (!line.call && line.what == "version") h.talos.push_back(line.seq);
    if (!line.call && line.what == "kubelet") h.kubelet.push_back(line.seq);
    if (line.call && line.code == "OK" && line.what.ends_with("/ApplyConfiguration")) {
      ++h.applies[line.node];
    }
  }
  return h;
}

// The in-process Kubernetes upgrade fails on a kubelet image that cannot be pulled and stays
// failed (UpgradeFailed, nothing applied); once the cause is fixed, one `retry` starts it again
// and it finishes.
TEST_F(E2eTest, FailedKubernetesUpgradeStartsAgainAfterOneRetry) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("kretry", 1, 1, "1.12.0", "1.34.1")}));
  world().PushProfiles({{"kretry", AtTalos("1.12.0", {}, "1.34.1")}}, "initial profile");
  E2E_ASSERT_OK(world().StartDaemon());
  const std::string worker = world().sim().cluster("kretry").WorkerNames().at(0);
  E2E_ASSERT_OK(world().sim().InjectFault(
      worker, R"({"kind":"image_pull_failure","image":"kubelet:v1.35"})"));
  const std::string bump = world().PushProfiles({{"kretry", AtTalos("1.12.0", {}, "1.35.0")}},
                                                "kretry: Kubernetes 1.35.0");
  core::ClusterStatus failed;
  E2E_ASSERT_OK_AND_ASSIGN(failed, world().WaitForStatus(
                                       "kretry",
                                       [&](const core::ClusterStatus& s) {
                                         return s.desired_commit_attempted == bump &&
                                                s.phase == core::ClusterPhase::kUpgradeFailed;
                                       },
                                       kTimeout));
  EXPECT_THAT(failed.message, ::testing::HasSubstr("on " + worker)) << failed.message;

  E2E_ASSERT_OK(world().sim().ClearFaults(worker));
  // The cause gone is not enough: the daemon keeps looking, and the failure stays.
  const uint64_t cleared = LastSeq(world().Journal());
  ASSERT_TRUE(world().WaitUntil(60s, [&] {
    return CountCalls(world().Journal(), "kretry", "", "", cleared) >= 10;
  }));
  auto still = world().repo().Status("kretry");
  ASSERT_TRUE(still.ok()) << still.status();
  EXPECT_EQ(still->phase, core::ClusterPhase::kUpgradeFailed) << Summary(*still);

  const OperatorCheckout work(world());
  work.Verb("retry", "kretry", "the registry mirror is back");
  E2E_ASSERT_OK(world().WaitForKubernetesReady("kretry", "1.35.0", work.Head(), kTimeout).status());
}

TEST_F(E2eTest, TalosAndKubernetesHopsInValidOrderToTalos112AndKubernetes135) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("hop", 1, 1, "1.10.6", "1.33.6")}));
  world().PushProfiles({{"hop", AtTalos("1.10.6", {}, "1.33.6")}}, "initial profile");
  E2E_ASSERT_OK(world().StartDaemon());
  E2E_ASSERT_OK(world().WaitForReady("hop", "1.10.6", "", kTimeout).status());
  const uint64_t since = LastSeq(world().Journal());

  const std::string commit = world().PushProfiles({{"hop", AtTalos("1.12.0", {}, "1.35.0")}},
                                                  "hop: Talos 1.12.0, Kubernetes 1.35.0");
  core::ClusterStatus done;
  E2E_ASSERT_OK_AND_ASSIGN(done, world().WaitForKubernetesReady("hop", "1.35.0", commit, kTimeout));
  EXPECT_EQ(done.talos.current, "1.12.0");
  const Hops hops = HopsOf(world().Journal(), "hop", since);
  // Two Talos hops (1.10 → 1.11 → 1.12) and two Kubernetes hops (1.33 → 1.34 → 1.35) on both
  // nodes, in an order that keeps every pair supported: Kubernetes 1.34 only once both nodes run
  // Talos 1.11, Kubernetes 1.35 only once both run Talos 1.12.
  ASSERT_EQ(hops.talos.size(), 4u) << world().Diagnostics();
  ASSERT_EQ(hops.kubelet.size(), 4u) << world().Diagnostics();
  EXPECT_LT(hops.talos[1], hops.kubelet[0]);
  EXPECT_LT(hops.talos[3], hops.kubelet[2]);
  // Per Kubernetes hop: the control plane 5 configurations, the worker 1.
  const std::string cp = world().sim().cluster("hop").ControlPlaneNames().at(0);
  const std::string w = world().sim().cluster("hop").WorkerNames().at(0);
  EXPECT_EQ(hops.applies.at(cp), 10);
  EXPECT_EQ(hops.applies.at(w), 2);
}

TEST_F(E2eTest, DaemonKilledDuringKubernetesUpgradeResumesWithNothingAppliedTwice) {
  E2E_ASSERT_OK(
      world().StartFleet({MakeCluster("k8s", 3, 2, "1.12.0", "1.34.1")}, {.time_scale = 0.05}));
  world().PushProfiles({{"k8s", AtTalos("1.12.0", {}, "1.34.1")}}, "initial profile");
  // One message per rollout, edited in place: the restart must edit the same ones.
  fake_chat::FakeChat chat("xoxb-e2e-bot-token", "C0E2ECHAN");
  std::ofstream(world().dir() / "slack-token") << "xoxb-e2e-bot-token\n";
  E2E_ASSERT_OK(world().StartDaemon([&](DaemonOptions& o) {
    o.extra_args = {"--notify",
                    "url=" + chat.SlackUrl() + ",format=slack-bot,channel=C0E2ECHAN,token-file=" +
                        (world().dir() / "slack-token").string(),
                    "--notify", "url=" + chat.DiscordUrl() + ",format=discord"};
  }));
  E2E_ASSERT_OK(world().WaitForReady("k8s", "1.12.0", "", kTimeout).status());
  const uint64_t since = LastSeq(world().Journal());

  const std::string commit =
      world().PushProfiles({{"k8s", AtTalos("1.12.0", {}, "1.35.0")}}, "k8s: Kubernetes 1.35.0");
  ASSERT_TRUE(world().WaitUntil(60s, [&] {
    int applies = 0;
    for (const auto& [node, n] : HopsOf(world().Journal(), "k8s", since).applies) applies += n;
    return applies >= 4;
  })) << world().Diagnostics();
  // The rollout's messages exist before the kill: the restarted daemon must find them again.
  ASSERT_TRUE(chat.WaitFor(30s, [&] { return chat.Messages().size() == 2; }));
  world().daemon().Kill();
  E2E_ASSERT_OK(world().daemon().Start());
  E2E_ASSERT_OK(world().WaitForKubernetesReady("k8s", "1.35.0", commit, kTimeout).status());
  const Hops hops = HopsOf(world().Journal(), "k8s", since);
  for (const auto& cp : world().sim().cluster("k8s").ControlPlaneNames()) {
    EXPECT_EQ(hops.applies.at(cp), 5) << cp;
  }
  for (const auto& w : world().sim().cluster("k8s").WorkerNames()) {
    EXPECT_EQ(hops.applies.at(w), 1) << w;
  }
  EXPECT_EQ(hops.kubelet.size(), 5u);
  const auto text = [](const fake_chat::ChatMessage& m) {
    return m.service == "slack" ? m.content.value("text", "")
                                : m.content["embeds"][0].value("description", "");
  };
  ASSERT_TRUE(chat.WaitFor(30s, [&] {
    int completed = 0;
    for (const auto& m : chat.Messages())
      completed += text(m).find("completed") != std::string::npos;
    return completed == 2;
  })) << chat.Messages().size();
  EXPECT_EQ(chat.Messages().size(), 2u);  // one in Slack, one in Discord, across the restart
  EXPECT_EQ(chat.Calls("chat.postMessage"), 1);
  EXPECT_EQ(chat.Calls("discord.execute"), 1);
  EXPECT_THAT(chat.Problems(), testing::IsEmpty());
}

// Talos 1.14 keeps Kubernetes in documents of their own: a cluster generated the 1.14 way (every
// component in its document) and one partly migrated by hand (the kubelet in KubeletConfig, the
// control plane in v1alpha1) both upgrade Kubernetes 1.36 → 1.37 completely through the daemon.
// talos-sim refuses a component set in both places, so a patch in the wrong place fails here.
TEST_F(E2eTest, Talos114ClustersUpgradeKubernetesWhereverTheirConfigKeepsIt) {
  ClusterDef generated = MakeCluster("gen", 1, 1, "1.14.0", "1.36.3");
  ClusterDef partly = MakeCluster("part", 1, 1, "1.14.0", "1.36.3");
  for (NodeDef& node : partly.nodes) node.config = "partly_migrated";
  E2E_ASSERT_OK(world().StartFleet({generated, partly}));
  world().PushProfiles({{"gen", AtTalos("1.14.0", {}, "1.36.3")},
                        {"part", AtTalos("1.14.0", {}, "1.36.3")}},
                       "initial profiles");
  E2E_ASSERT_OK(world().StartDaemon());
  E2E_ASSERT_OK(world().WaitForReady("gen", "1.14.0", "", kTimeout).status());
  E2E_ASSERT_OK(world().WaitForReady("part", "1.14.0", "", kTimeout).status());
  const uint64_t since = LastSeq(world().Journal());

  const std::string commit = world().PushProfiles({{"gen", AtTalos("1.14.0", {}, "1.37.0")},
                                                   {"part", AtTalos("1.14.0", {}, "1.37.0")}},
                                                  "Kubernetes 1.37.0");
  for (const char* cluster : {"gen", "part"}) {
    SCOPED_TRACE(cluster);
    E2E_ASSERT_OK(world().WaitForKubernetesReady(cluster, "1.37.0", commit, kTimeout).status());
    const Hops hops = HopsOf(world().Journal(), cluster, since);
    // Every kubelet restarted once on 1.37; the control plane took its five configurations, the
    // worker its one: none was refused and none applied twice.
    EXPECT_EQ(hops.kubelet.size(), 2u) << world().Diagnostics();
    EXPECT_EQ(hops.applies.at(world().sim().cluster(cluster).ControlPlaneNames().at(0)), 5);
    EXPECT_EQ(hops.applies.at(world().sim().cluster(cluster).WorkerNames().at(0)), 1);
  }
}

}  // namespace
}  // namespace tr::e2e
