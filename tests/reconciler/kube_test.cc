#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reconciler/clients/kube/drain.h"
#include "reconciler/clients/kube/kubeconfig.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(KubeconfigTest, ReadsTheCurrentContext) {
  // "Y2E=" is "ca", "dG9r" unused; the token is plain text as kubeconfig stores it.
  const char* yaml = R"(
apiVersion: v1
kind: Config
current-context: admin@prod
contexts:
  - name: other
    context: {cluster: other, user: other}
  - name: admin@prod
    context: {cluster: prod, user: admin@prod}
clusters:
  - name: prod
    cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: "Y2E="}
users:
  - name: admin@prod
    user: {token: s3cret-token}
)";
  absl::StatusOr<KubeCredentials> c = ParseKubeconfig(yaml);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->ca_pem, "ca");
  EXPECT_EQ(c->token, "s3cret-token");
}

TEST(KubeconfigTest, ErrorsNameTheProblemNotTheSecret) {
  const char* no_creds = R"(
current-context: a
contexts: [{name: a, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: "https://x:6443", certificate-authority-data: "Y2E="}}]
users: [{name: u, user: {client-key-data: "c2VjcmV0LWtleQ=="}}]
)";
  absl::StatusOr<KubeCredentials> c = ParseKubeconfig(no_creds);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("neither a token nor a client certificate"));
  EXPECT_THAT(c.status().message(), Not(HasSubstr("secret-key")));
  EXPECT_FALSE(ParseKubeconfig("current-context: nope\n").ok());
  EXPECT_FALSE(ParseKubeconfig("[").ok());
}

// An in-memory API that behaves like the real one for a drain: evicting removes the pod unless
// a budget allows no disruption, which answers 429 until `budget_frees_after` evictions tried.
class FakeKube final : public KubeClient {
 public:
  absl::StatusOr<std::vector<KubeNode>> ListNodes() override { return std::vector<KubeNode>{}; }
  absl::Status SetUnschedulable(const std::string& node, bool value) override {
    cordoned[node] = value;
    return absl::OkStatus();
  }
  absl::Status SetPendingInstall(const std::string& node,
                                 const std::optional<std::string>& annotation) override {
    pending_install[node] = annotation;
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<KubePod>> ListPodsOnNode(const std::string& node) override {
    std::vector<KubePod> out;
    for (const KubePod& p : pods) {
      if (p.node == node) out.push_back(p);
    }
    return out;
  }
  absl::Status EvictPod(const std::string& ns, const std::string& name) override {
    ++evictions;
    if (name == "guarded" && evictions <= budget_frees_after) {
      return absl::ResourceExhaustedError(
          "Cannot evict pod as it would violate the pod's "
          "disruption budget.");
    }
    std::erase_if(pods, [&](const KubePod& p) { return p.namespace_name == ns && p.name == name; });
    return absl::OkStatus();
  }
  // A plain DELETE of a pod: no budget is asked.
  absl::Status DeleteObject(const std::string& path, const std::string&) override {
    deleted.push_back(path);
    const size_t before = pods.size();
    std::erase_if(pods, [&](const KubePod& p) {
      return path == "/api/v1/namespaces/" + p.namespace_name + "/pods/" + p.name;
    });
    return pods.size() < before ? absl::OkStatus() : absl::NotFoundError(path);
  }
  std::vector<KubePod> pods;
  std::vector<std::string> deleted;
  std::map<std::string, bool> cordoned;
  std::map<std::string, std::optional<std::string>> pending_install;
  int evictions = 0;
  int budget_frees_after = 0;
};

// Sleeps move its clock at once: drains take no real time.
using tr::test_support::SimulatedEnv;

std::vector<KubePod> NodePods() {
  return {{"default", "web", "w-0", "ReplicaSet", false, false},
          {"default", "guarded", "w-0", "ReplicaSet", false, false},
          {"kube-system", "kube-proxy-x", "w-0", "DaemonSet", false, false},
          {"kube-system", "static", "w-0", "Node", true, false},
          {"default", "elsewhere", "w-1", "ReplicaSet", false, false}};
}

TEST(DrainTest, CordonsEvictsAndLeavesDaemonSetsAndMirrors) {
  FakeKube kube;
  kube.pods = NodePods();
  SimulatedEnv clock;
  ASSERT_TRUE(DrainNode(kube, "w-0", {}, clock, {}).ok());
  EXPECT_TRUE(kube.cordoned["w-0"]);
  std::vector<std::string> left;
  for (const KubePod& p : kube.pods) left.push_back(p.name);
  EXPECT_EQ(left, (std::vector<std::string>{"kube-proxy-x", "static", "elsewhere"}));
}

TEST(DrainTest, RetriesWhileABudgetRefusesThenSucceeds) {
  FakeKube kube;
  kube.pods = NodePods();
  kube.budget_frees_after = 4;
  SimulatedEnv clock;
  ASSERT_TRUE(
      DrainNode(kube, "w-0", {std::chrono::minutes(5), std::chrono::seconds(5)}, clock, {}).ok());
  EXPECT_FALSE(clock.slept.empty());
  EXPECT_EQ(clock.slept.front(), std::chrono::seconds(5));
}

TEST(DrainTest, TimesOutNamingThePodAndTheBudget) {
  FakeKube kube;
  kube.pods = NodePods();
  kube.budget_frees_after = 1'000'000;
  SimulatedEnv clock;
  absl::Status s =
      DrainNode(kube, "w-0", {std::chrono::seconds(30), std::chrono::seconds(5)}, clock, {})
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("drain of w-0 timed out after 30s"));
  EXPECT_THAT(s.message(), HasSubstr("default/guarded"));
  EXPECT_THAT(s.message(), HasSubstr("disruption budget"));
  EXPECT_THAT(kube.deleted, testing::IsEmpty()) << "halt must not delete a pod";
  EXPECT_TRUE(kube.cordoned["w-0"]);
}

TEST(DrainTest, TellsWhatHoldsItWhileItWaits) {
  FakeKube kube;
  kube.pods = NodePods();
  kube.budget_frees_after = 3;
  SimulatedEnv clock;
  std::vector<std::string> held;
  DrainOptions options{std::chrono::minutes(5), std::chrono::seconds(5)};
  options.on_held = [&](const std::string& why) { held.push_back(why); };
  ASSERT_TRUE(DrainNode(kube, "w-0", options, clock, {}).ok());
  // Told after each round the budget refused, naming the pod and the API server's reason.
  ASSERT_FALSE(held.empty());
  EXPECT_EQ(held.front(),
            "held by default/guarded (Cannot evict pod as it would violate the pod's disruption "
            "budget.)");
}

TEST(DrainTest, ForceDeletesOnlyThePodsABudgetHeldPastTheTimeout) {
  FakeKube kube;
  kube.pods = NodePods();
  kube.budget_frees_after = 1'000'000;
  SimulatedEnv clock;
  const auto start = clock.Now();
  DrainOptions options{std::chrono::seconds(30), std::chrono::seconds(5),
                       core::DrainTimeoutAction::kForce};
  absl::StatusOr<DrainResult> drained = DrainNode(kube, "w-0", options, clock, {});
  ASSERT_TRUE(drained.ok()) << drained.status();
  EXPECT_EQ(drained->forced, std::vector<std::string>{"default/guarded"});
  EXPECT_EQ(kube.deleted, std::vector<std::string>{"/api/v1/namespaces/default/pods/guarded"});
  // It waited the whole timeout first, and the evictable pod left by eviction.
  EXPECT_GE(clock.Now() - start, std::chrono::seconds(30));
  std::vector<std::string> left;
  for (const KubePod& p : kube.pods) left.push_back(p.name);
  EXPECT_EQ(left, (std::vector<std::string>{"kube-proxy-x", "static", "elsewhere"}));
}

TEST(DrainTest, ForceDeletesNothingWhenTheBudgetFreesInTime) {
  FakeKube kube;
  kube.pods = NodePods();
  kube.budget_frees_after = 4;
  SimulatedEnv clock;
  DrainOptions options{std::chrono::minutes(5), std::chrono::seconds(5),
                       core::DrainTimeoutAction::kForce};
  absl::StatusOr<DrainResult> drained = DrainNode(kube, "w-0", options, clock, {});
  ASSERT_TRUE(drained.ok()) << drained.status();
  EXPECT_TRUE(drained->forced.empty());
  EXPECT_TRUE(kube.deleted.empty());
}

}  // namespace
}  // namespace tr::reconciler::kube
