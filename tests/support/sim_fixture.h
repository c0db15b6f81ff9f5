// Test fixture for the Talos client integration tests: starts a talos-sim fleet in-process on
// this process's own loopback addresses (tests run as separate processes under ctest -j) and
// builds real gRPC clients from the talosconfig files the fleet writes (Ed25519 material, key
// PEM labelled "ED25519 PRIVATE KEY" as Talos writes it), and HTTPS clients of its Kubernetes
// API from the kubeconfigs.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "base/env.h"
#include "fmt/format.h"
#include "reconciler/clients/cluster_clients.h"
#include "reconciler/clients/kube/http_kube_client.h"
#include "reconciler/clients/kube/kubeconfig.h"
#include "reconciler/clients/talos/events_follower.h"
#include "reconciler/clients/talos/grpc_talos_client.h"
#include "reconciler/clients/talos/talosconfig.h"
#include "tests/sim/api/apid_router.h"
#include "tests/sim/fleet.h"

#define TR_CONCAT_INNER(a, b) a##b
#define TR_CONCAT(a, b) TR_CONCAT_INNER(a, b)
#define TR_ASSERT_OK_AND_ASSIGN_IMPL(var, lhs, expr) \
  auto var = (expr);                                 \
  ASSERT_TRUE(var.ok()) << var.status();             \
  lhs = std::move(*var)
// `lhs = *expr` after asserting that `expr` (a StatusOr) is OK.
#define TR_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  TR_ASSERT_OK_AND_ASSIGN_IMPL(TR_CONCAT(status_or_, __LINE__), lhs, expr)

namespace tr::reconciler::talos {

// The clients of a test's one cluster, whatever the profile: a Talos client and a Kubernetes
// client (null: none).
class FixedClusterClients final : public ClusterClientFactory {
 public:
  explicit FixedClusterClients(std::shared_ptr<TalosClient> talos,
                               std::shared_ptr<kube::KubeClient> kube = nullptr)
      : talos_(std::move(talos)), kube_(std::move(kube)) {}
  absl::StatusOr<ClusterClients> ForProfile(const core::ClusterProfile&) override {
    return ClusterClients{talos_, kube_};
  }

 private:
  std::shared_ptr<TalosClient> talos_;
  std::shared_ptr<kube::KubeClient> kube_;
};

// Client deadlines for tests: generous against a slow sanitizer build, small against a node
// that never answers.
inline GrpcTalosClientOptions TestClientOptions() {
  GrpcTalosClientOptions options;
  options.timeouts.connect = std::chrono::seconds(3);
  options.timeouts.read = std::chrono::seconds(15);
  options.timeouts.mutate = std::chrono::seconds(15);
  options.timeouts.image = std::chrono::seconds(30);
  options.timeouts.transfer = std::chrono::seconds(30);
  options.max_reconnect_backoff = std::chrono::milliseconds(100);
  return options;
}

class SimTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (fleet_) fleet_->Stop();
    std::error_code ignored;
    if (!state_dir_.empty()) std::filesystem::remove_all(state_dir_, ignored);
  }

  // Starts the fleet described by `yaml` (a talos-sim fleet file). `refuse_while_down`: a node
  // that is down refuses connections (a real machine) instead of answering UNAVAILABLE.
  void StartFleet(const std::string& yaml, bool refuse_while_down = false) {
    auto spec = sim::FleetSpec::Parse(yaml);
    ASSERT_TRUE(spec.ok()) << spec.status();
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    state_dir_ =
        std::filesystem::path(::testing::TempDir()) /
        fmt::format("talos-client-{}-{}-{}", info->test_suite_name(), info->name(), getpid());
    std::error_code ignored;
    std::filesystem::remove_all(state_dir_, ignored);
    sim::FleetOptions options;
    options.refuse_connections_while_down = refuse_while_down;
    auto fleet = sim::Fleet::Start(*std::move(spec), state_dir_, options);
    ASSERT_TRUE(fleet.ok()) << fleet.status();
    fleet_ = *std::move(fleet);
  }

  // The talosconfig context the fleet wrote for `cluster` and `role` ("os:admin", "os:reader").
  void LoadContext(const std::string& cluster, const std::string& role, TalosContext* out) {
    auto access = fleet_->Cluster(cluster);
    ASSERT_TRUE(access.ok()) << access.status();
    const auto path = role == "os:admin" ? access->talosconfig : access->talosconfig_by_role[role];
    ASSERT_FALSE(path.empty()) << "no talosconfig for " << role;
    auto config = LoadTalosConfig(path);
    ASSERT_TRUE(config.ok()) << config.status();
    auto context = config->Context();
    ASSERT_TRUE(context.ok()) << context.status();
    *out = *std::move(context);
  }

  // A client for the cluster's admin context (endpoints: its control planes).
  void NewClient(const std::string& cluster, std::unique_ptr<TalosClient>* out,
                 const std::string& role = "os:admin") {
    TalosContext context;
    ASSERT_NO_FATAL_FAILURE(LoadContext(cluster, role, &context));
    ASSERT_NO_FATAL_FAILURE(NewClientFor(context, out));
  }

  void NewClientFor(const TalosContext& context, std::unique_ptr<TalosClient>* out) {
    auto client = NewGrpcTalosClient(context, Env::Default(), TestClientOptions());
    ASSERT_TRUE(client.ok()) << client.status();
    *out = *std::move(client);
  }

  // An HTTPS client of `cluster`'s Kubernetes API, from the kubeconfig the fleet wrote.
  void NewKubeClient(const std::string& cluster, std::unique_ptr<kube::KubeClient>* out) {
    auto access = fleet_->Cluster(cluster);
    ASSERT_TRUE(access.ok()) << access.status();
    std::ifstream in(access->kubeconfig);
    std::stringstream text;
    text << in.rdbuf();
    auto credentials = kube::ParseKubeconfig(text.str());
    ASSERT_TRUE(credentials.ok()) << credentials.status();
    auto client = kube::NewHttpKubeClient(*credentials, env_);
    ASSERT_TRUE(client.ok()) << client.status();
    *out = *std::move(client);
  }

  std::string Address(const std::string& node) {
    auto address = fleet_->NodeAddress(node);
    EXPECT_TRUE(address.ok()) << address.status();
    return address.ok() ? *address : std::string();
  }

  // The profile of ThreeNodeFleet's cluster "prod": its three control planes and its worker.
  core::ClusterProfile ThreeNodeProfile() {
    core::ClusterProfile profile;
    profile.name = "prod";
    for (const char* cp : {"cp-1", "cp-2", "cp-3"}) {
      profile.nodes.push_back({cp, Address(cp), core::NodeRole::kControlPlane});
    }
    profile.nodes.push_back({"w-1", Address("w-1"), core::NodeRole::kWorker});
    return profile;
  }

  sim::NodeSnapshot Snapshot(const std::string& node) {
    auto snapshot = fleet_->Node(node);
    EXPECT_TRUE(snapshot.ok()) << snapshot.status();
    return snapshot.ok() ? *snapshot : sim::NodeSnapshot{};
  }

  // Options for following a node across a reboot with test-sized backoff and deadline.
  FollowOptions Follow(std::function<absl::StatusOr<std::string>()> start) {
    FollowOptions options;
    options.start = std::move(start);
    options.deadline = env_.Now() + std::chrono::seconds(30);
    options.initial_backoff = std::chrono::milliseconds(5);
    options.max_backoff = std::chrono::milliseconds(50);
    return options;
  }

  // Upgrades `node` with the legacy API and follows it until RUNNING and ready on a new boot;
  // `events` (may be null) gets every event seen.
  absl::StatusOr<FollowResult> FollowLegacyUpgrade(TalosClient& client, const std::string& node,
                                                   const std::string& image,
                                                   std::vector<MachineEvent>* events = nullptr) {
    auto before = client.BootId(node);
    if (!before.ok()) return before.status();
    EventsFollower follower(client, env_);
    FollowOptions options = Follow([&]() -> absl::StatusOr<std::string> {
      LegacyUpgradeRequest request;
      request.image = image;
      auto ack = client.Upgrade(node, request);
      if (!ack.ok()) return ack.status();
      EXPECT_EQ(ack->ack, "Upgrade request received");
      return ack->actor_id;
    });
    options.boot_id_before = *before;
    if (events != nullptr) {
      options.on_event = [events](const MachineEvent& e) { events->push_back(e); };
    }
    return follower.FollowUntilReady(node, options, {});
  }

  // Journal calls of `method` ("/machine.MachineService/Upgrade") served for `node` (by name):
  // of a one-to-many call, the node's part.
  std::vector<sim::JournalEntry> Calls(const std::string& node, const std::string& method) {
    std::vector<sim::JournalEntry> out;
    for (auto& entry : fleet_->journal().Entries()) {
      if (entry.kind == sim::JournalEntry::Kind::kCall && entry.node == node &&
          entry.what == method && !entry.detail.starts_with(sim::kFanoutCall)) {
        out.push_back(std::move(entry));
      }
    }
    return out;
  }

  std::filesystem::path state_dir_;
  std::unique_ptr<sim::Fleet> fleet_;
  Env& env_ = Env::Default();  // real time: the simulator runs on it too
};

// Three control planes and a worker on Talos `version` with Kubernetes 1.34.1, at a time scale
// that makes a whole upgrade take tens of milliseconds. `timings`: a fleet-file flow mapping
// ("{apid_hang: 2000s}"), empty for the defaults.
inline std::string ThreeNodeFleet(const std::string& version, const std::string& worker_version,
                                  const std::string& timings = "") {
  return fmt::format(R"(
time_scale: 0.001
timings: {2}
clusters:
  - name: prod
    nodes:
      - {{name: cp-1, role: controlplane, talos: {0}, kubernetes: 1.34.1}}
      - {{name: cp-2, role: controlplane, talos: {0}, kubernetes: 1.34.1}}
      - {{name: cp-3, role: controlplane, talos: {0}, kubernetes: 1.34.1}}
      - {{name: w-1, role: worker, talos: {1}, kubernetes: 1.34.1}}
)",
                     version, worker_version, timings.empty() ? "{}" : timings);
}

}  // namespace tr::reconciler::talos
