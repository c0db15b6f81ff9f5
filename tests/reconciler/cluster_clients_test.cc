// The client factory against talos-sim over mutual TLS and a blackhole (a listener that
// accepts connections and never answers): one cluster's hanging kubeconfig fetch never holds
// up another's clients, and the process's shutdown cancels it and every Kubernetes call.
#include "reconciler/clients/cluster_clients.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "tests/sim/fleet.h"
#include "tests/support/blackhole.h"
#include "tests/support/wait.h"

namespace tr::reconciler {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using ::tr::test_support::Blackhole;

core::ClusterProfile Profile(const std::string& name, const std::string& credentials,
                             const std::string& endpoint, const std::string& cp_address) {
  core::ClusterProfile profile;
  profile.name = name;
  profile.credentials = credentials;
  profile.endpoints = {endpoint};
  profile.nodes = {{name + "-cp", cp_address, core::NodeRole::kControlPlane}};
  return profile;
}

TEST(ClusterClientsTest, AHangingClusterDoesNotHoldUpAnotherAndShutdownCancelsIt) {
  const fs::path dir =
      fs::temp_directory_path() / ("tr-cluster-clients-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  absl::StatusOr<sim::FleetSpec> spec = sim::FleetSpec::Parse(R"(
time_scale: 0.001
address_prefix: auto
clusters:
  - name: lab
    nodes:
      - {name: lab-cp, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<std::unique_ptr<sim::Fleet>> fleet = sim::Fleet::Start(*spec, dir / "sim");
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  const std::string cp = *(*fleet)->NodeAddress("lab-cp");
  const std::string hole_host = cp.substr(0, cp.rfind('.')) + ".241";
  Blackhole hole(hole_host);

  std::stop_source shutdown;
  talos::GrpcTalosClientOptions options;
  options.shutdown = shutdown.get_token();
  // Waits for a kubeconfig as long as it takes: only the factory's locking is on trial.
  TalosconfigClientFactory factory(dir / "sim", options, Env::Default(), 10min);
  const core::ClusterProfile hanging =
      Profile("hanging", "lab", hole_host + ":" + std::to_string(hole.port()), hole_host);
  auto hanging_clients =
      std::async(std::launch::async, [&] { return factory.ForProfile(hanging); });
  // The blackhole's accept shows the call: nothing else does.
  ASSERT_TRUE(hole.WaitAccepted(1)) << "the hanging cluster's kubeconfig fetch never connected";

  absl::StatusOr<ClusterClients> lab = factory.ForProfile(Profile("lab", "lab", cp, cp));
  ASSERT_TRUE(lab.ok()) << lab.status();
  EXPECT_NE(lab->talos, nullptr);
  EXPECT_NE(lab->kube, nullptr);
  EXPECT_EQ(hanging_clients.wait_for(0s), std::future_status::timeout)
      << "the hanging cluster's fetch ended before the other cluster got its clients";
  ASSERT_TRUE(lab->kube->ListNodes().ok());

  shutdown.request_stop();  // cancels the hanging call
  // The Kubernetes client takes the same shutdown (http_kube_client_test.cc shows it ending
  // calls in flight).
  EXPECT_EQ(lab->kube->ListNodes().status().code(), absl::StatusCode::kCancelled);
  absl::StatusOr<ClusterClients> hung = hanging_clients.get();
  ASSERT_TRUE(hung.ok()) << hung.status();
  EXPECT_NE(hung->talos, nullptr);
  EXPECT_EQ(hung->kube, nullptr);
  (*fleet)->Stop();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tr::reconciler
