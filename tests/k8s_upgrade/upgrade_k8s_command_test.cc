// `talos-reconciler upgrade-k8s` as a process against the in-process talos-sim: killed with
// SIGKILL in the middle and run again, it completes with nothing applied twice; a fault gives
// the documented exit code and a message naming the component and node.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <thread>

#include "reconciler/operations/k8s_upgrade/manifest_objects.h"
#include "tests/k8s_upgrade/upgrade_fixture.h"
#include "tests/support/wait.h"

namespace tr::reconciler::k8s_upgrade {
namespace {

class UpgradeK8sCommandTest : public UpgradeFixture {
 protected:
  // Writes the profile repository (clusters/prod.yaml) for the fleet that is running.
  void WriteRepo() {
    repo_ = state_dir_ / "repo";
    std::filesystem::create_directories(repo_ / "clusters");
    std::string nodes, endpoints;
    for (const auto& n : fleet_->Nodes()) {
      const bool cp = n.role == sim::NodeRole::kControlPlane;
      nodes += fmt::format("    - {{name: {}, address: {}, role: {}}}\n", n.name, n.address,
                           cp ? "controlplane" : "worker");
      if (cp) endpoints += (endpoints.empty() ? "" : ", ") + n.address;
    }
    std::ofstream(repo_ / "clusters" / "prod.yaml")
        << "apiVersion: talos-reconciler.dev/v1alpha1\nkind: ClusterProfile\nmetadata:\n"
        << "  name: prod\nspec:\n  endpoints: [" << endpoints << "]\n  credentials: prod\n"
        << "  talos:\n    version: 1.12.0\n    image: ghcr.io/siderolabs/installer\n  "
           "kubernetes:\n    version: 1.35.0\n  nodes:\n"
        << nodes;
  }

  // Starts the command; its output goes to <state>/out-N.txt and err-N.txt.
  pid_t Start(const std::vector<std::string>& extra_args = {}) {
    ++runs_;
    const std::string binary = std::string(TR_BINARY_DIR) + "/reconciler/talos-reconciler";
    const std::string out = (state_dir_ / fmt::format("out-{}.txt", runs_)).string();
    const std::string err = (state_dir_ / fmt::format("err-{}.txt", runs_)).string();
    std::vector<std::string> args = {binary,
                                     "upgrade-k8s",
                                     "--cluster",
                                     "prod",
                                     "--to",
                                     "1.35.0",
                                     "--repo",
                                     repo_.string(),
                                     "--credentials-dir",
                                     state_dir_.string(),
                                     "--poll-interval-ms",
                                     "10",
                                     "--static-pod-timeout-ms",
                                     "3000",
                                     "--kubelet-timeout-ms",
                                     "3000",
                                     "--termination-log",
                                     (state_dir_ / "termination-log").string()};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    pid_t pid = fork();
    if (pid == 0) {
      if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(127);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
    return pid;
  }

  // Waits for the process to end (its pidfd turns readable; 60 s deadline); its wait status.
  int Wait(pid_t pid) {
    const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    pollfd ended{pidfd, POLLIN, 0};
    int polled = 0;
    while (pidfd >= 0 && (polled = poll(&ended, 1, 60'000)) < 0 && errno == EINTR) {
    }
    if (pidfd >= 0) close(pidfd);
    if (polled != 1) {
      kill(pid, SIGKILL);
      ADD_FAILURE() << "upgrade-k8s did not finish";
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
  }

  std::string Read(const std::string& name) {
    std::ifstream in(state_dir_ /
                     (name == "termination-log" ? name : fmt::format("{}-{}.txt", name, runs_)));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::filesystem::path repo_;
  int runs_ = 0;
};

// A run killed with SIGKILL, the next one stopped with SIGTERM (what a Job's pod gets when it is
// deleted or evicted), the third completes: every component's image changed exactly once on
// every node (the simulator journals each change), none twice, none skipped.
TEST_F(UpgradeK8sCommandTest, KilledThenTerminatedThenRunAgainPatchesEachComponentOnce) {
  time_scale_ = "0.05";  // 100 ms per static pod or kubelet restart: time to kill it midway
  StartFleet(Fleet("v1.12.0", "1.34.1", ""));
  WriteRepo();
  pid_t pid = Start();
  ASSERT_TRUE(
      test_support::WaitUntil([&] { return TotalApplies() >= 3; }, std::chrono::seconds(60)));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  const int killed = Wait(pid);
  ASSERT_TRUE(WIFSIGNALED(killed)) << "finished before it was killed: " << Read("err");
  const size_t before = TotalApplies();
  EXPECT_LT(before, kAllApplies);

  pid = Start();
  ASSERT_TRUE(test_support::WaitUntil([&] { return TotalApplies() >= before + 3; },
                                      std::chrono::seconds(60)));
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  const int terminated = Wait(pid);
  ASSERT_TRUE(WIFEXITED(terminated)) << "died of the signal";
  EXPECT_EQ(WEXITSTATUS(terminated), 4) << Read("err");
  EXPECT_NE(Read("err").find("upgrade-k8s: stopped "), std::string::npos) << Read("err");
  EXPECT_NE(Read("err").find("; run again to resume"), std::string::npos) << Read("err");
  EXPECT_EQ(Read("termination-log"), Read("err"));
  const size_t stopped_at = TotalApplies();
  EXPECT_LT(stopped_at, kAllApplies);

  const int status = Wait(Start());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << Read("err");
  EXPECT_EQ(TotalApplies(), kAllApplies);
  for (const auto& n : fleet_->Nodes()) {
    const bool cp = n.role == sim::NodeRole::kControlPlane;
    for (const char* c :
         {"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kubelet"}) {
      const bool expected = cp || std::string(c) == "kubelet";
      EXPECT_EQ(ImageChanges(n.name, c), expected ? 1u : 0u) << c << " on " << n.name;
    }
  }
  EXPECT_EQ(ManifestChanges().size(), 1u);  // the kube-proxy DaemonSet, once
  ExpectAllAt("1.35.0");
  EXPECT_NE(Read("out").find("kubelets 5/5: w-2 at v1.35.0"), std::string::npos) << Read("out");
  EXPECT_EQ(Read("termination-log"), "upgrade-k8s: Kubernetes 1.34.1 → 1.35.0: done\n");
}

// After the command, the bootstrap manifests are Talos's as talosctl and machined see them:
// every field manager `talos`, the inventory annotation, listed in Talos's inventory.
TEST_F(UpgradeK8sCommandTest, ManifestsEndTalosOwnedAndInItsInventory) {
  StartFleet(Fleet("v1.12.0", "1.34.1", ""));
  WriteRepo();
  const int status = Wait(Start());
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << Read("err");
  std::unique_ptr<kube::KubeClient> kube = Kube();
  auto inventory = kube->GetObject(
      "/api/v1/namespaces/kube-system/configmaps/talos-bootstrap-manifests-inventory");
  ASSERT_TRUE(inventory.ok()) << inventory.status();
  EXPECT_EQ(InventoryKeys(nlohmann::json::parse(*inventory)),
            (std::set<std::string>{"kube-system_kube-proxy_apps_DaemonSet",
                                   "kube-system_coredns_apps_Deployment"}));
  for (const char* path : {"/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy",
                           "/apis/apps/v1/namespaces/kube-system/deployments/coredns"}) {
    auto text = kube->GetObject(path);
    ASSERT_TRUE(text.ok()) << text.status();
    const nlohmann::json object = nlohmann::json::parse(*text);
    EXPECT_EQ(object.value(nlohmann::json::json_pointer(
                               "/metadata/annotations/config.k8s.io~1owning-inventory"),
                           ""),
              kInventoryName)
        << path;
    EXPECT_TRUE(AppliedByTalos(object)) << object.dump();
    for (const nlohmann::json& entry : object["metadata"]["managedFields"]) {
      EXPECT_EQ(entry.value("manager", ""), "talos") << path << ": " << entry.dump();
    }
  }
}

// --manifests-no-prune keeps what left the manifests; without it the next run prunes it.
TEST_F(UpgradeK8sCommandTest, ManifestsNoPruneKeepsWhatLeftTheManifests) {
  StartFleet(Fleet("v1.12.0", "1.34.1", ""));
  WriteRepo();
  const int first = Wait(Start());
  ASSERT_TRUE(WIFEXITED(first));
  ASSERT_EQ(WEXITSTATUS(first), 0) << Read("err");
  DisableKubeProxy();
  const std::string proxy = "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy";
  const int kept = Wait(Start({"--manifests-no-prune"}));
  ASSERT_TRUE(WIFEXITED(kept));
  ASSERT_EQ(WEXITSTATUS(kept), 0) << Read("err");
  EXPECT_TRUE(Kube()->GetObject(proxy).ok());
  const int pruned = Wait(Start());
  ASSERT_TRUE(WIFEXITED(pruned));
  ASSERT_EQ(WEXITSTATUS(pruned), 0) << Read("err");
  EXPECT_TRUE(absl::IsNotFound(Kube()->GetObject(proxy).status()));
  EXPECT_NE(Read("out").find("manifests: DaemonSet kube-system/kube-proxy pruned"),
            std::string::npos)
      << Read("out");
}

TEST_F(UpgradeK8sCommandTest, FailedComponentExitsThreeNamingComponentAndNode) {
  StartFleet(Fleet("v1.12.0", "1.34.1", "", "w-2", "kubelet_not_returning"));
  WriteRepo();
  const int status = Wait(Start());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_NE(Read("err").find("upgrade-k8s: kubelet failed on w-2: "), std::string::npos)
      << Read("err");
  EXPECT_NE(Read("out").find("kubelets 4/5: w-1 at v1.35.0"), std::string::npos);
}

TEST_F(UpgradeK8sCommandTest, PreCheckRefusalExitsTwo) {
  StartFleet(Fleet("v1.12.0", "1.33.6", ""));
  WriteRepo();
  const int status = Wait(Start());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(Read("err").find("pre-checks failed: unsupported upgrade path"), std::string::npos)
      << Read("err");
  EXPECT_EQ(TotalApplies(), 0u);
}

}  // namespace
}  // namespace tr::reconciler::k8s_upgrade
