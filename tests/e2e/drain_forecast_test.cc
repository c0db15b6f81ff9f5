// The drain forecast end to end: a pull request bumps two clusters on the lifecycle path; one is
// seeded with twelve patterns that hold or hurt a drain, the other with a healthy workload. The
// pull request's comment names each pattern on the node whose drain meets it, and nothing on the
// healthy cluster; merged with policy.drain.onTimeout force, the rollouts delete exactly the
// pods the forecast said a budget would hold, and no other. Plain pass only, for the time
// budget: the forecast's rules are tested in both passes (tests/core/disruption_forecast_test.cc,
// tests/reconciler/workload_json_test.cc, LivePlanTest).
#include <gmock/gmock.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_split.h"
#include "fmt/format.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/pull_request_loop.h"

namespace tr::e2e {
namespace {
#ifndef TR_ASAN

using ::testing::HasSubstr;

// Two pools of two workers each: pool zk (w-0, w-1) and pool sp (w-2, w-3).
ClusterDef Shop() {
  ClusterDef shop = MakeCluster("shop", 1, 4, "1.13.2", "1.35.0");
  for (NodeDef& node : shop.nodes) {
    if (node.name == "shop-w-0" || node.name == "shop-w-1") node.labels = "{pool: zk}";
    if (node.name == "shop-w-2" || node.name == "shop-w-3") node.labels = "{pool: sp}";
  }
  shop.extra = R"(    pods:
      - {name: solo-0, namespace: apps, node: shop-w-0, labels: {app: solo}}
      - {name: frozen-a, namespace: apps, node: shop-w-1, labels: {app: frozen}}
      - {name: pin-a, namespace: apps, node: shop-w-2, labels: {app: pin}, node_selector: {kubernetes.io/hostname: shop-w-2}}
      - {name: pin-b, namespace: apps, node: shop-w-2, labels: {app: pin}, node_selector: {kubernetes.io/hostname: shop-w-2}}
      - {name: debug, namespace: apps, node: shop-w-1, labels: {app: debug}, owner: none}
      - {name: pg-0, namespace: apps, node: shop-w-3, labels: {app: pg}, owner: StatefulSet, volumes: [{name: data, claim: data-pg-0}]}
      - {name: cache-0, namespace: apps, node: shop-w-0, labels: {app: cache}, volumes: [{name: tmp, empty_dir: true}]}
      - {name: logs-0, namespace: apps, node: shop-w-1, labels: {app: logs}, volumes: [{name: logs, host_path: /var/log/app}]}
      - {name: zk-a, namespace: apps, node: shop-w-0, labels: {app: zk}, node_selector: {pool: zk}, anti_affinity: {app: zk}}
      - {name: zk-b, namespace: apps, node: shop-w-1, labels: {app: zk}, node_selector: {pool: zk}, anti_affinity: {app: zk}}
      - {name: sp-a, namespace: apps, node: shop-w-2, labels: {app: sp}, node_selector: {pool: sp}, spread: {max_skew: 1, labels: {app: sp}}}
      - {name: sp-b, namespace: apps, node: shop-w-3, labels: {app: sp}, node_selector: {pool: sp}, spread: {max_skew: 1, labels: {app: sp}}}
      - {name: shaky-a, namespace: apps, node: shop-w-3, labels: {app: shaky}, ready: false}
      - {name: shaky-b, namespace: apps, node: shop-w-0, labels: {app: shaky}}
      - {name: dual-0, namespace: apps, node: shop-w-1, labels: {app: dual, tier: edge}}
      - {name: pct-a, namespace: apps, node: shop-w-2, labels: {app: pct}}
      - {name: pct-b, namespace: apps, node: shop-w-3, labels: {app: pct}}
    pdbs:
      - {name: solo, namespace: apps, selector: {app: solo}, min_available: 1}
      - {name: frozen, namespace: apps, selector: {app: frozen}, max_unavailable: 0}
      - {name: pin, namespace: apps, selector: {app: pin}, min_available: 1}
      - {name: shaky, namespace: apps, selector: {app: shaky}, max_unavailable: 1}
      - {name: dual-app, namespace: apps, selector: {app: dual}, max_unavailable: 1}
      - {name: dual-tier, namespace: apps, selector: {tier: edge}, max_unavailable: 1}
      - {name: pct, namespace: apps, selector: {app: pct}, min_available: "100%"}
    persistent_volumes:
      - {name: pv-pg-0, node: shop-w-3, storage_class: local, claim: apps/data-pg-0}
    storage_classes:
      - {name: local, provisioner: kubernetes.io/no-provisioner, binding_mode: WaitForFirstConsumer}
)";
  return shop;
}

// Three replicas, one per node, at most one away: every drain finishes.
ClusterDef Calm() {
  ClusterDef calm = MakeCluster("calm", 1, 2, "1.13.2", "1.35.0");
  calm.extra = R"(    pods:
      - {name: web-a, namespace: apps, node: calm-w-0, labels: {app: web}}
      - {name: web-b, namespace: apps, node: calm-w-1, labels: {app: web}}
      - {name: web-c, namespace: apps, node: calm-cp-0, labels: {app: web}}
    pdbs:
      - {name: web, namespace: apps, selector: {app: web}, max_unavailable: 1}
)";
  return calm;
}

// One worker at a time; a drain a budget holds is forced after 3 s (well past a replacement's
// start in the simulator) so that the rollout finishes and shows which pods were held.
ProfileDef At(const std::string& talos) {
  return AtTalos(talos, {"settle: 0s", "maxParallelWorkers: 1",
                         "drain: {timeout: 3s, onTimeout: force}"},
                 "1.35.0");
}

// The comment's forecast row of `node`: "| `node` | ... |"; empty when it has none.
std::string RowOf(const std::string& comment, const std::string& node) {
  for (absl::string_view line : absl::StrSplit(comment, '\n')) {
    if (absl::StartsWith(line, "| `" + node + "` |")) return std::string(line);
  }
  return "";
}

// The base of a pod's name: a ReplicaSet's replacement is "<name>-<5 chars>".
std::string BaseName(std::string pod) {
  static const std::set<std::string> kSeeded = {"solo-0", "frozen-a", "pin-a", "pin-b", "debug",
                                                "pg-0", "cache-0", "logs-0", "zk-a", "zk-b",
                                                "sp-a", "sp-b", "shaky-a", "shaky-b", "dual-0",
                                                "pct-a", "pct-b", "web-a", "web-b", "web-c"};
  while (!kSeeded.contains(pod.substr(pod.find('/') + 1)) && pod.size() > 6 &&
         pod[pod.size() - 6] == '-') {
    pod.resize(pod.size() - 6);
  }
  return pod;
}

// "apps/<pod>" of every "**blocks** `apps/<pod>`" in the comment's rows of `cluster`'s nodes.
std::set<std::string> PredictedBlocked(const std::string& comment, const std::string& cluster) {
  std::set<std::string> pods;
  for (absl::string_view line : absl::StrSplit(comment, '\n')) {
    if (!absl::StartsWith(line, "| `" + cluster + "-")) continue;
    for (size_t at = line.find("**blocks** `"); at != absl::string_view::npos;
         at = line.find("**blocks** `", at + 1)) {
      const size_t start = at + 12;
      pods.insert(std::string(line.substr(start, line.find('`', start) - start)));
    }
  }
  return pods;
}

std::set<std::string> ForcedDeletes(const std::vector<JournalLine>& journal,
                                    const std::string& cluster, uint64_t since) {
  std::set<std::string> pods;
  for (const JournalLine& line : journal) {
    if (line.seq > since && !line.call && line.cluster == cluster && line.what == "delete") {
      pods.insert(BaseName(line.detail));
    }
  }
  return pods;
}

TEST_F(E2eTest, DrainForecastNamesEveryBlockerBeforeTheMergeAndTheRolloutMeetsNoOther) {
  FakeForge forge("github", "acme/fleet", kForgeToken);
  std::string hooks;
  E2E_ASSERT_OK_AND_ASSIGN(
      hooks, StartFleetWithForge(world(), "github", forge, {Shop(), Calm()},
                                 {{"shop", At("1.13.2")}, {"calm", At("1.13.2")}},
                                 {"shop", "1.13.2"}));
  E2E_ASSERT_OK(world().WaitForReady("calm", "1.13.2", "", 60s).status());
  PullRequestLoop loop(world(), "github", hooks);
  loop.PushHead("shop", ProfileYaml(world().sim().cluster("shop"), At("1.13.9")));
  const std::string head =
      loop.PushHead("calm", ProfileYaml(world().sim().cluster("calm"), At("1.13.9")));
  EXPECT_EQ(loop.Webhook("opened", head), 202);
  ASSERT_TRUE(forge.WaitFor(60s, [&] {
    const auto comments = forge.Comments(7);
    return comments.size() == 1 && comments[0].body.find(head.substr(0, 12)) != std::string::npos;
  })) << testing::PrintToString(forge.Requests()) << world().Diagnostics();
  const std::string comment = forge.Comments(7)[0].body;
  SCOPED_TRACE(comment);

  // Each pattern, named on the node whose drain meets it (workers in order w-0 … w-3).
  const std::string w0 = RowOf(comment, "shop-w-0");
  EXPECT_THAT(w0, HasSubstr("**blocks** `apps/solo-0`: budget apps/solo allows no eviction"));
  EXPECT_THAT(w0, HasSubstr("**data** `apps/cache-0`: its emptyDir data is lost"));
  EXPECT_THAT(w0, HasSubstr("**stays Pending** `apps/zk-a`: its required anti-affinity"));
  EXPECT_THAT(w0, HasSubstr("**blocks** `apps/shaky-b`: budget apps/shaky allows no eviction "
                            "(needs 1 healthy, has 1)"));
  const std::string w1 = RowOf(comment, "shop-w-1");
  EXPECT_THAT(w1, HasSubstr("**blocks** `apps/frozen-a`: budget apps/frozen allows no eviction"));
  EXPECT_THAT(w1, HasSubstr("**deleted** `apps/debug`: no controller"));
  EXPECT_THAT(w1, HasSubstr("**data** `apps/logs-0`: its hostPath /var/log/app stays behind on "
                            "shop-w-1"));
  EXPECT_THAT(w1, HasSubstr("**stays Pending** `apps/zk-b`"));
  EXPECT_THAT(w1, HasSubstr("**blocks** `apps/dual-0`: budgets apps/dual-app and apps/dual-tier "
                            "both select it"));
  const std::string w2 = RowOf(comment, "shop-w-2");
  EXPECT_THAT(w2, HasSubstr("**stays Pending** `apps/pin-a`: its node selector matches no other "
                            "node"));
  EXPECT_THAT(w2, HasSubstr("**blocks** `apps/pin-b`"));
  EXPECT_THAT(w2, HasSubstr("**stays Pending** `apps/sp-a`: its topology spread"));
  EXPECT_THAT(w2, HasSubstr("**blocks** `apps/pct-a`: budget apps/pct allows no eviction "
                            "(needs 2 healthy, has 2)"));
  const std::string w3 = RowOf(comment, "shop-w-3");
  EXPECT_THAT(w3, HasSubstr("**stays Pending** `apps/pg-0`: its volume binds it to shop-w-3"));
  EXPECT_THAT(w3, HasSubstr("**stays Pending** `apps/sp-b`"));
  EXPECT_THAT(w3, HasSubstr("**blocks** `apps/pct-b`"));
  EXPECT_THAT(comment, HasSubstr("`policy.drain.onTimeout: force`"));
  // The healthy cluster: no row, every node clear.
  EXPECT_EQ(RowOf(comment, "calm-w-0") + RowOf(comment, "calm-w-1") + RowOf(comment, "calm-cp-0"),
            "");
  EXPECT_THAT(comment, HasSubstr("Nothing in the way on `calm-w-0`, `calm-w-1`, `calm-cp-0`."));

  // Merged: both roll out, and the only pods deleted past a drain's timeout are the ones the
  // forecast said a budget would hold.
  const uint64_t since = LastSeq(world().Journal());
  const std::string merge = loop.Merge();
  EXPECT_EQ(loop.Webhook("closed", head, /*merged=*/true, merge), 202);
  E2E_ASSERT_OK(world().WaitForReady("shop", "1.13.9", merge, 180s).status());
  E2E_ASSERT_OK(world().WaitForReady("calm", "1.13.9", merge, 60s).status());
  const std::set<std::string> predicted = PredictedBlocked(comment, "shop");
  EXPECT_EQ(ForcedDeletes(world().Journal(), "shop", since), predicted);
  EXPECT_EQ(predicted.size(), 7u) << "solo-0, shaky-b, frozen-a, dual-0, pin-b, pct-a, pct-b";
  EXPECT_TRUE(ForcedDeletes(world().Journal(), "calm", since).empty());
  // While a drain waited, the status said which pod and budget held it.
  absl::StatusOr<std::vector<StatusVersion>> history = world().repo().StatusHistory("shop");
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_TRUE(std::any_of(history->begin(), history->end(), [](const StatusVersion& v) {
    return v.status.message.find("draining shop-w-0 before its reboot: held by apps/") !=
           std::string::npos;
  }));
}

#endif  // TR_ASAN
}  // namespace
}  // namespace tr::e2e
