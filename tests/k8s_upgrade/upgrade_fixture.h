// Fixture of the Kubernetes upgrade tests: a talos-sim fleet (three control planes, two workers)
// started in-process, and what its journal says about the configurations applied.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "fmt/format.h"
#include "reconciler/clients/kube/http_kube_client.h"
#include "reconciler/clients/kube/kubeconfig.h"
#include "tests/support/sim_fixture.h"
#include "yaml-cpp/yaml.h"

namespace tr::reconciler::k8s_upgrade {

class UpgradeFixture : public talos::SimTest {
 protected:
  // Three control planes on 17 applies: 3 static pods + kube-proxy + kubelet each, 2 kubelets.
  static constexpr size_t kAllApplies = 17;

  // The fleet file: every node on Talos `talos` and Kubernetes `kubernetes`, except w-1 on
  // `w1_talos` when given; `fault_node` gets the fault `fault_kind` (image text `fault_image`).
  std::string Fleet(const std::string& talos, const std::string& kubernetes,
                    const std::string& w1_talos, const std::string& fault_node = "",
                    const std::string& fault_kind = "", const std::string& fault_image = "") {
    auto node = [&](const std::string& name, const char* role, const std::string& version) {
      std::string faults;
      if (name == fault_node) {
        faults = fmt::format(", faults: [{{kind: {}, image: \"{}\"}}]", fault_kind, fault_image);
      }
      return fmt::format("      - {{name: {}, role: {}, talos: {}, kubernetes: {}{}}}\n", name,
                         role, version, kubernetes, faults);
    };
    std::string out = "time_scale: " + time_scale_ + "\nclusters:\n  - name: prod\n    nodes:\n";
    for (const char* cp : {"cp-1", "cp-2", "cp-3"}) out += node(cp, "controlplane", talos);
    out += node("w-1", "worker", w1_talos.empty() ? talos : w1_talos);
    out += node("w-2", "worker", talos);
    return out;
  }

  std::string time_scale_ = "0.001";

  // Sets cluster.proxy.disabled on every control plane, as an operator does to run without
  // kube-proxy (a CNI replacing it): Talos renders no kube-proxy manifest any more.
  void DisableKubeProxy() {
    std::unique_ptr<talos::TalosClient> client;
    NewClient("prod", &client);
    for (const auto& n : fleet_->Nodes()) {
      if (n.role != sim::NodeRole::kControlPlane) continue;
      auto served =
          client->CosiGet(n.address, "config", "MachineConfigs.config.talos.dev", "v1alpha1");
      ASSERT_TRUE(served.ok()) << served.status();
      std::vector<YAML::Node> docs = YAML::LoadAll(served->yaml_spec);
      ASSERT_FALSE(docs.empty());
      docs[0]["cluster"]["proxy"]["disabled"] = true;
      YAML::Emitter out;
      for (const YAML::Node& doc : docs) out << YAML::BeginDoc << doc;
      talos::ApplyConfigurationRequest request;
      request.config_yaml = out.c_str();
      request.mode = talos::ApplyMode::kNoReboot;
      auto applied = client->ApplyConfiguration(n.address, request);
      ASSERT_TRUE(applied.ok()) << applied.status();
    }
  }

  // The options of an upgrade of every node of "prod" to Kubernetes `to`, with the short
  // polls and timeouts a test on the simulator wants.
  UpgradeOptions SimUpgradeOptions(const std::string& to) {
    UpgradeOptions options;
    options.target = core::ParseKubernetesVersion(to).value();
    for (const auto& node : fleet_->Nodes()) {
      options.nodes.push_back({node.name, node.address, node.role == sim::NodeRole::kControlPlane});
    }
    options.poll_interval = std::chrono::milliseconds(10);
    options.static_pod_timeout = std::chrono::milliseconds(1500);
    options.kubelet_timeout = std::chrono::milliseconds(1500);
    return options;
  }

  // A client of the cluster's Kubernetes API (the simulator's, over HTTPS), from its kubeconfig.
  std::unique_ptr<kube::KubeClient> Kube() {
    auto access = fleet_->Cluster("prod");
    EXPECT_TRUE(access.ok());
    std::ifstream in(access->kubeconfig);
    std::stringstream text;
    text << in.rdbuf();
    auto credentials = kube::ParseKubeconfig(text.str());
    EXPECT_TRUE(credentials.ok()) << credentials.status();
    auto kube = kube::NewHttpKubeClient(*credentials, Env::Default());
    EXPECT_TRUE(kube.ok()) << kube.status();
    return kube.ok() ? *std::move(kube) : nullptr;
  }

  size_t Applies(const std::string& node) {
    return Calls(node, "/machine.MachineService/ApplyConfiguration").size();
  }

  size_t TotalApplies() {
    size_t total = 0;
    for (const char* n : {"cp-1", "cp-2", "cp-3", "w-1", "w-2"}) total += Applies(n);
    return total;
  }

  // How often the simulator changed `component`'s image on `node` (one per configuration that
  // set a new one).
  size_t ImageChanges(const std::string& node, const std::string& component) {
    size_t changes = 0;
    for (const auto& e : fleet_->journal().Entries()) {
      changes += e.kind == sim::JournalEntry::Kind::kState && e.node == node && e.what == "image" &&
                 e.detail.starts_with(component + " = ");
    }
    return changes;
  }

  // What server-side applies of the bootstrap manifests changed, in order.
  std::vector<std::string> ManifestChanges() {
    std::vector<std::string> changes;
    for (const auto& e : fleet_->journal().Entries()) {
      if (e.kind == sim::JournalEntry::Kind::kState && e.what == "manifest") {
        changes.push_back(e.detail);
      }
    }
    return changes;
  }

  uint64_t FirstCallSeq(const std::string& node, const std::string& method) {
    auto calls = Calls(node, method);
    return calls.empty() ? UINT64_MAX : calls.front().seq;
  }

  uint64_t FirstStateSeq(const std::string& node, const std::string& what,
                         const std::string& detail_prefix) {
    for (const auto& e : fleet_->journal().Entries()) {
      if (e.kind == sim::JournalEntry::Kind::kState && e.node == node && e.what == what &&
          e.detail.starts_with(detail_prefix)) {
        return e.seq;
      }
    }
    return UINT64_MAX;
  }

  void ExpectAllAt(const std::string& version) {
    for (const auto& n : fleet_->Nodes()) {
      EXPECT_EQ(n.kubernetes_version, version) << n.name;
      EXPECT_TRUE(n.kube_ready) << n.name;
    }
  }
};

}  // namespace tr::reconciler::k8s_upgrade
