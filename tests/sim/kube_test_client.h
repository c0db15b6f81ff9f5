// Test helper: a fleet started from YAML and an HTTPS client of its first cluster's Kubernetes
// API (certificate verified against the kubeconfig's CA, the kubeconfig's bearer token).
// Test-only; not part of the talos_sim library.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "nlohmann/json.hpp"
#include "tests/sim/fleet.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim::testing {

class KubeFleet {
 public:
  // Starts the fleet in a fresh directory named after the running test; check ok() after.
  explicit KubeFleet(const std::string& yaml) {
    dir_ = std::filesystem::temp_directory_path() /
           ("sim-kubefleet-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto spec = FleetSpec::Parse(yaml);
    if (!spec.ok()) {
      status_ = spec.status();
      return;
    }
    auto fleet = Fleet::Start(*spec, dir_);
    if (!fleet.ok()) {
      status_ = fleet.status();
      return;
    }
    fleet_ = std::move(*fleet);
    access_ = *fleet_->Cluster(fleet_->ClusterNames().front());
    YAML::Node kubeconfig = YAML::LoadFile(access_.kubeconfig.string());
    token_ = kubeconfig["users"][0]["user"]["token"].as<std::string>();
    std::ofstream(dir_ / "kube-ca.pem") << access_.kube_ca_pem;
    client_ = NewClient();
  }
  // A client of the API with its own connection (a watch holds one).
  std::unique_ptr<httplib::SSLClient> NewClient() const {
    auto client =
        std::make_unique<httplib::SSLClient>(access_.control_plane_addresses.front(), 6443);
    client->set_ca_cert_path((dir_ / "kube-ca.pem").c_str());
    client->enable_server_certificate_verification(true);
    client->set_bearer_token_auth(token_.c_str());
    // Not httplib's 5 s: an unpaged list of thousands of pods from the sanitizer build, with the
    // other tests running beside it, took longer (KubeObjectsTest.ThousandsOfPodsAreReadInChunks).
    client->set_read_timeout(std::chrono::seconds(60));
    return client;
  }
  ~KubeFleet() {
    fleet_.reset();
    std::filesystem::remove_all(dir_);
  }
  KubeFleet(const KubeFleet&) = delete;
  KubeFleet& operator=(const KubeFleet&) = delete;

  const absl::Status& status() const { return status_; }
  Fleet& fleet() { return *fleet_; }

  // GET `path`, expecting `expect`; the body as JSON (null when there was no answer).
  nlohmann::json Get(const std::string& path, int expect = 200) {
    auto res = client_->Get(path.c_str());
    EXPECT_TRUE(res) << httplib::to_string(res.error());
    if (!res) return {};
    EXPECT_EQ(res->status, expect) << path << ": " << res->body;
    return nlohmann::json::parse(res->body, nullptr, false);
  }
  // POSTs a policy/v1 Eviction of the pod; {status code, body}.
  std::pair<int, nlohmann::json> Evict(const std::string& ns, const std::string& name) {
    const nlohmann::json eviction = {{"apiVersion", "policy/v1"},
                                     {"kind", "Eviction"},
                                     {"metadata", {{"name", name}, {"namespace", ns}}}};
    auto res = client_->Post(
        ("/api/v1/namespaces/" + ns + "/pods/" + name + "/eviction").c_str(), eviction.dump(),
        "application/json");
    EXPECT_TRUE(res);
    if (!res) return {0, {}};
    return {res->status, nlohmann::json::parse(res->body, nullptr, false)};
  }
  // A merge patch of the Node `node`.
  void PatchNode(const std::string& node, const nlohmann::json& patch) {
    auto res = client_->Patch(("/api/v1/nodes/" + node).c_str(), patch.dump(),
                              "application/merge-patch+json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
  }
  // Cordons (or uncordons) a node with a merge patch, as kubectl does.
  void Cordon(const std::string& node, bool cordon) {
    PatchNode(node, nlohmann::json{{"spec", {{"unschedulable", cordon}}}});
  }

 private:
  absl::Status status_;
  std::filesystem::path dir_;
  std::unique_ptr<Fleet> fleet_;
  ClusterAccess access_;
  std::string token_;
  std::unique_ptr<httplib::SSLClient> client_;
};

}  // namespace tr::sim::testing
