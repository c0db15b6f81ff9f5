// The machine configurations talos-sim serves and accepts, over the wire: each shaped as
// `talosctl gen config` of the node's Talos version writes it (or as the fleet file's `config:`
// says), and every applied one validated with Talos 1.14's rules for the Kubernetes documents
// (config_documents.h cites the upstream files).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cosi/resource/state.grpc.pb.h"
#include "machine/machine.grpc.pb.h"
#include "tests/sim/fleet.h"
#include "tests/sim/test_client.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim {
namespace {

using testing::Call;
using ::testing::ElementsAre;

constexpr const char* kShapesFleet = R"(
time_scale: 0.001
clusters:
  - name: prod
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.14.0, kubernetes: 1.36.3}
      - {name: cp-2, role: controlplane, talos: v1.14.0, kubernetes: 1.36.3, config: v1alpha1}
      - {name: cp-3, role: controlplane, talos: v1.14.0, kubernetes: 1.36.3, config: migrated}
      - {name: w-1, role: worker, talos: v1.14.0, kubernetes: 1.36.3, config: partly_migrated}
      - {name: w-2, role: worker, talos: v1.13.9, kubernetes: 1.36.3}
)";

class ConfigGrpcTest : public testing::ProdFleetTest {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(StartProdFleet(kShapesFleet, "sim-config")); }

  std::string Served(const std::string& node) {
    return Resource(node, "config", "MachineConfigs.config.talos.dev", "v1alpha1");
  }

  std::string Resource(const std::string& node, const char* ns, const char* type, const char* id) {
    auto cosi = cosi::resource::State::NewStub(channel_);
    cosi::resource::GetRequest get;
    get.set_namespace_(ns);
    get.set_type(type);
    get.set_id(id);
    cosi::resource::GetResponse got;
    auto ctx = Call(Addr(node));
    grpc::Status st = cosi->Get(ctx.get(), get, &got);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return got.resource().spec().yaml_spec();
  }

  // The kinds of the documents after v1alpha1, and the v1alpha1 sections that are set.
  std::vector<std::string> Kinds(const std::string& config) {
    std::vector<std::string> kinds;
    for (const YAML::Node& doc : YAML::LoadAll(config)) {
      if (doc["kind"]) kinds.push_back(doc["kind"].as<std::string>());
    }
    return kinds;
  }
  std::vector<std::string> Sections(const std::string& config) {
    const YAML::Node v1alpha1 = YAML::LoadAll(config).front();
    std::vector<std::string> set;
    for (const char* section : {"machine", "cluster"}) {
      for (const char* key : {"install", "kubelet", "clusterName", "controlPlane", "apiServer",
                              "controllerManager", "scheduler", "proxy"}) {
        if (v1alpha1[section][key]) set.push_back(std::string(section) + "." + key);
      }
    }
    return set;
  }

  grpc::Status Apply(const std::string& node, const std::string& config) {
    machine::ApplyConfigurationRequest req;
    req.set_data(config);
    req.set_mode(machine::ApplyConfigurationRequest::NO_REBOOT);
    machine::ApplyConfigurationResponse resp;
    auto ctx = Call(Addr(node));
    return machine_->ApplyConfiguration(ctx.get(), req, &resp);
  }
};

TEST_F(ConfigGrpcTest, ServesEachShape) {
  // 1.14 generated: the Kubernetes documents, UnattendedInstallConfig, KubeClusterConfig.
  const std::string generated = Served("cp-1");
  EXPECT_THAT(Sections(generated), ElementsAre());
  EXPECT_THAT(Kinds(generated),
              ElementsAre("UnattendedInstallConfig", "KubeClusterConfig", "KubeAPIServerConfig",
                          "KubeControllerManagerConfig", "KubeSchedulerConfig", "KubeProxyConfig",
                          "KubeletConfig"));
  EXPECT_NE(generated.find("image: registry.k8s.io/kube-apiserver:v1.36.3"), std::string::npos);
  EXPECT_THAT(Kinds(Served("cp-2")), ElementsAre());
  EXPECT_THAT(Sections(Served("cp-2")),
              ElementsAre("machine.install", "machine.kubelet", "cluster.clusterName",
                          "cluster.controlPlane", "cluster.apiServer", "cluster.controllerManager",
                          "cluster.scheduler", "cluster.proxy"));
  EXPECT_THAT(Sections(Served("cp-3")),
              ElementsAre("machine.install", "cluster.clusterName", "cluster.controlPlane"));
  EXPECT_THAT(Kinds(Served("cp-3")),
              ElementsAre("KubeAPIServerConfig", "KubeControllerManagerConfig",
                          "KubeSchedulerConfig", "KubeProxyConfig", "KubeletConfig"));
  // Workers: KubeletConfig only (the control-plane documents are refused on them).
  const std::string partly = Served("w-1");
  EXPECT_THAT(Sections(partly), ElementsAre("machine.install", "cluster.clusterName",
                                            "cluster.controlPlane", "cluster.proxy"));
  EXPECT_THAT(Kinds(partly),
              ElementsAre("KubeletConfig", "NetworkRuleConfig", "NetworkDefaultActionConfig"));
  // 1.13 generated: v1alpha1 sections only.
  EXPECT_THAT(Sections(Served("w-2")),
              ElementsAre("machine.install", "machine.kubelet", "cluster.clusterName",
                          "cluster.controlPlane", "cluster.proxy"));
}

// Each component's document beside its v1alpha1 section: upstream's error text, as one
// go-multierror, InvalidArgument; nothing applied.
TEST_F(ConfigGrpcTest, RefusesAComponentSetTwice) {
  const std::string migrated = Served("cp-3");
  const struct {
    const char* section;
    const char* error;
  } cases[] = {
      {"cluster:\n  apiServer:\n    image: registry.k8s.io/kube-apiserver:v1.36.3\n",
       "kube-apiserver config is already set in v1alpha1 config (.cluster.apiServer)"},
      {"cluster:\n  controllerManager: {}\n",
       "kube-controller-manager config is already set in v1alpha1 config "
       "(.cluster.controllerManager)"},
      {"machine:\n  controlplane:\n    controllerManager: {disabled: false}\n",
       "kube-controller-manager config is already set in v1alpha1 config "
       "(.machine.controlplane.controllerManager)"},
      {"cluster:\n  scheduler:\n    image: registry.k8s.io/kube-scheduler:v1.36.3\n",
       "kube-scheduler config is already set in v1alpha1 config (.cluster.scheduler)"},
      {"cluster:\n  proxy:\n    image: registry.k8s.io/kube-proxy:v1.36.3\n",
       "cluster proxy config in v1alpha1 config (.machine.cluster.proxy) can't be used with "
       "KubeProxyConfig document, please remove it to avoid conflicts"},
      {"machine:\n  kubelet:\n    image: ghcr.io/siderolabs/kubelet:v1.36.3\n",
       "kubelet config is already set in v1alpha1 config (.machine.kubelet)"},
  };
  for (const auto& c : cases) {
    std::vector<YAML::Node> docs = YAML::LoadAll(migrated);
    const YAML::Node add = YAML::Load(c.section);
    for (const auto& top : add) {
      for (const auto& field : top.second) {
        docs[0][top.first.as<std::string>()][field.first.as<std::string>()] = field.second;
      }
    }
    YAML::Emitter out;
    for (const YAML::Node& doc : docs) out << YAML::BeginDoc << doc;
    const grpc::Status st = Apply("cp-3", out.c_str());
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.error;
    EXPECT_EQ(st.error_message(), std::string("1 error occurred:\n\t* ") + c.error + "\n\n");
  }
  EXPECT_EQ(Served("cp-3"), migrated);
}

TEST_F(ConfigGrpcTest, RefusesWhatTalosRefusesBesideTheDocuments) {
  // .machine.install beside UnattendedInstallConfig, and an empty image in a document.
  std::string generated = Served("cp-1");
  std::string config = generated;
  config.replace(config.find("machine:\n"), 9, "machine:\n  install:\n    disk: /dev/sda\n");
  const std::string kubelet = "image: ghcr.io/siderolabs/kubelet:v1.36.3";
  config.replace(config.find(kubelet), kubelet.size(), "image: \"\"");
  grpc::Status st = Apply("cp-1", config);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(),
            "2 errors occurred:\n\t* KubeletConfig: kubelet image cannot be empty\n\t* "
            "UnattendedInstallConfig config is incompatible with v1alpha1 config "
            "(.machine.install)\n\n");
  // A control-plane document on a worker.
  std::string worker = Served("w-1");
  worker +=
      "---\napiVersion: v1alpha1\nkind: KubeSchedulerConfig\nimage: "
      "registry.k8s.io/kube-scheduler:v1.36.3\n";
  st = Apply("w-1", worker);
  EXPECT_EQ(st.error_message(),
            "1 error occurred:\n\t* the following document kinds are only allowed on control "
            "plane machines: [KubeSchedulerConfig]\n\n");
  // The image of a migrated component is read from its document.
  const std::string apiserver = "registry.k8s.io/kube-apiserver:v1.36.3";
  generated.replace(generated.find(apiserver), apiserver.size(),
                    "registry.k8s.io/kube-apiserver:v1.37.0");
  ASSERT_TRUE(Apply("cp-1", generated).ok());
  EXPECT_EQ(Served("cp-1"), generated);
  const std::string spec =
      Resource("cp-1", "controlplane", "APIServerConfigs.kubernetes.talos.dev", "kube-apiserver");
  EXPECT_EQ(YAML::Load(spec)["image"].as<std::string>(""),
            "registry.k8s.io/kube-apiserver:v1.37.0");
}

}  // namespace
}  // namespace tr::sim
