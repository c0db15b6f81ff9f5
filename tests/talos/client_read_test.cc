// The real gRPC Talos client against talos-sim over mutual TLS: read-only calls.
#include <gmock/gmock.h>

#include <fstream>

#include "core/base64.h"
#include "reconciler/clients/talos/tar_gz.h"
#include "resource/definitions/k8s/k8s.pb.h"
#include "resource/definitions/v1alpha1/v1alpha1.pb.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/slow_link.h"

namespace tr::reconciler::talos {
namespace {

using ::testing::HasSubstr;

class ClientReadTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("v1.11.6", "v1.11.6")));
    ASSERT_NO_FATAL_FAILURE(NewClient("prod", &client_));
  }
  std::unique_ptr<TalosClient> client_;
};

TEST_F(ClientReadTest, VersionBootIdAndMachineStatus) {
  NodeVersion version;
  TR_ASSERT_OK_AND_ASSIGN(version, client_->Version(Address("cp-2")));
  EXPECT_EQ(version.tag, "v1.11.6");
  EXPECT_EQ(version.version.ToString(), "1.11.6");
  EXPECT_EQ(version.platform, "metal");

  std::string boot_id;
  TR_ASSERT_OK_AND_ASSIGN(boot_id, client_->BootId(Address("w-1")));
  EXPECT_EQ(boot_id, Snapshot("w-1").boot_id);
  EXPECT_EQ(boot_id.size(), 36u);  // a UUID, newline trimmed

  MachineStatus status;
  TR_ASSERT_OK_AND_ASSIGN(status, client_->GetMachineStatus(Address("w-1")));
  EXPECT_EQ(status.stage, core::MachineStage::kRunning);
  EXPECT_TRUE(status.ready);
}

TEST_F(ClientReadTest, TalosconfigKeyIsEd25519WithTheTalosLabel) {
  // The fleet writes its talosconfig as Talos does; the client got here by relabelling the key.
  std::ifstream in(fleet_->Cluster("prod")->talosconfig);
  std::string line;
  std::string key_pem;
  while (std::getline(in, line)) {
    const auto at = line.find("key: ");
    if (at == std::string::npos) continue;
    std::string encoded = line.substr(at + 5);
    std::erase(encoded, '"');
    std::optional<std::string> decoded = core::DecodeBase64(encoded);
    ASSERT_TRUE(decoded.has_value());
    key_pem = *decoded;
  }
  EXPECT_THAT(key_pem, HasSubstr("-----BEGIN ED25519 PRIVATE KEY-----"));
  TalosContext context;
  ASSERT_NO_FATAL_FAILURE(LoadContext("prod", "os:admin", &context));
  EXPECT_THAT(context.key_pem, HasSubstr("-----BEGIN PRIVATE KEY-----"));
  EXPECT_TRUE(client_->Version(Address("w-1")).ok());
}

TEST_F(ClientReadTest, ServicesAndEtcd) {
  std::vector<ServiceState> services;
  TR_ASSERT_OK_AND_ASSIGN(services, client_->ServiceList(Address("cp-1")));
  bool etcd_healthy = false;
  for (const auto& service : services) etcd_healthy |= service.id == "etcd" && service.Healthy();
  EXPECT_TRUE(etcd_healthy);

  std::vector<EtcdMember> members;
  TR_ASSERT_OK_AND_ASSIGN(members, client_->EtcdMemberList(Address("cp-1")));
  ASSERT_EQ(members.size(), 3u);
  for (const auto& member : members) {
    EXPECT_FALSE(member.is_learner);
    EXPECT_NE(member.id, 0u);
  }

  EtcdMemberStatus status;
  TR_ASSERT_OK_AND_ASSIGN(status, client_->EtcdStatus(Address("cp-3")));
  EXPECT_TRUE(status.errors.empty());
  EXPECT_EQ(status.member_id, *Snapshot("cp-3").etcd_member_id);
  EXPECT_NE(status.leader, 0u);

  // etcd is control-plane only; the node says so with its own error.
  auto worker = client_->EtcdStatus(Address("w-1"));
  EXPECT_FALSE(worker.ok());
  EXPECT_THAT(std::string(worker.status().message()),
              HasSubstr(fmt::format("talos EtcdStatus on node {}", Address("w-1"))));
}

TEST_F(ClientReadTest, KubeconfigIsATarGzWithTheKubeconfigFile) {
  std::string archive;
  TR_ASSERT_OK_AND_ASSIGN(archive, client_->Kubeconfig(Address("cp-1")));
  std::string kubeconfig;
  TR_ASSERT_OK_AND_ASSIGN(kubeconfig, ExtractFileFromTarGz(archive, "kubeconfig"));
  EXPECT_THAT(kubeconfig, HasSubstr("apiVersion: v1"));
  EXPECT_THAT(kubeconfig, HasSubstr(fleet_->Cluster("prod")->kube_api_url));
}

TEST_F(ClientReadTest, EtcdSnapshotIsStreamedToAFile) {
  const auto path = state_dir_ / "etcd.snapshot";
  uint64_t bytes = 0;
  TR_ASSERT_OK_AND_ASSIGN(bytes, client_->EtcdSnapshot(Address("cp-2"), path));
  EXPECT_GT(bytes, 0u);
  EXPECT_EQ(std::filesystem::file_size(path), bytes);
  EXPECT_FALSE(std::filesystem::exists(state_dir_ / "etcd.snapshot.part"));
  // The cluster's secrets: readable by this user only.
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST_F(ClientReadTest, CosiGetListAndSpecs) {
  CosiResource kubelet;
  TR_ASSERT_OK_AND_ASSIGN(
      kubelet,
      client_->CosiGet(Address("w-1"), "k8s", "KubeletSpecs.kubernetes.talos.dev", "kubelet"));
  ::talos::resource::definitions::k8s::KubeletSpecSpec spec;
  ASSERT_TRUE(spec.ParseFromString(kubelet.proto_spec));
  EXPECT_EQ(spec.image(), "ghcr.io/siderolabs/kubelet:v1.34.1");
  EXPECT_FALSE(kubelet.version.empty());

  std::vector<CosiResource> services;
  TR_ASSERT_OK_AND_ASSIGN(
      services, client_->CosiList(Address("cp-1"), "runtime", "Services.v1alpha1.talos.dev"));
  bool etcd_running = false;
  for (const auto& resource : services) {
    ::talos::resource::definitions::v1alpha1::ServiceSpec service;
    ASSERT_TRUE(service.ParseFromString(resource.proto_spec));
    etcd_running |= resource.id == "etcd" && service.running() && service.healthy();
  }
  EXPECT_TRUE(etcd_running);

  auto missing =
      client_->CosiGet(Address("w-1"), "k8s", "KubeletSpecs.kubernetes.talos.dev", "no-such-id");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  // A namespace Talos does not register is refused by the node's access policy, not NotFound.
  auto nowhere =
      client_->CosiGet(Address("w-1"), "kubelet", "KubeletSpecs.kubernetes.talos.dev", "kubelet");
  EXPECT_EQ(nowhere.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(nowhere.status().message(), HasSubstr("namespace \"kubelet\" is not supported"));
}

TEST_F(ClientReadTest, CallsForAnEndpointNodeGoThroughAnotherEndpoint) {
  ASSERT_TRUE(client_->Version(Address("cp-1")).ok());
  ASSERT_TRUE(client_->Version(Address("cp-2")).ok());
  for (const std::string node : {"cp-1", "cp-2"}) {
    const auto calls = Calls(node, "/machine.MachineService/Version");
    ASSERT_EQ(calls.size(), 1u) << node;
    EXPECT_FALSE(calls[0].endpoint.empty()) << node << " served its own call";
    EXPECT_NE(calls[0].endpoint, node);
    EXPECT_NE(calls[0].endpoint, Address(node));
  }
}

TEST_F(ClientReadTest, SingleEndpointThatIsTheNodeIsDialledDirectly) {
  TalosContext context;
  ASSERT_NO_FATAL_FAILURE(LoadContext("prod", "os:admin", &context));
  context.endpoints = {Endpoint{Address("cp-3"), kApidPort}};
  std::unique_ptr<TalosClient> direct;
  ASSERT_NO_FATAL_FAILURE(NewClientFor(context, &direct));
  NodeVersion version;
  TR_ASSERT_OK_AND_ASSIGN(version, direct->Version(Address("cp-3")));
  EXPECT_EQ(version.tag, "v1.11.6");
}

// A TLS handshake that takes longer than the reconnect backoff is still waited for, up to the
// connect timeout: gRPC's "min reconnect backoff" is its connect timeout, and a backoff-sized
// value made every attempt over a slow link fail ("timed out before receiving SETTINGS frame").
TEST_F(ClientReadTest, ASlowHandshakeIsWaitedForUpToTheConnectTimeout) {
  const std::string cp1 = Address("cp-1");
  test_support::SlowLink link(cp1, cp1, 50000, std::chrono::milliseconds(600));
  ASSERT_TRUE(link.ok());
  TalosContext context;
  ASSERT_NO_FATAL_FAILURE(LoadContext("prod", "os:admin", &context));
  context.endpoints = {Endpoint{cp1, static_cast<uint16_t>(link.port())}};
  std::unique_ptr<TalosClient> slow;
  ASSERT_NO_FATAL_FAILURE(NewClientFor(context, &slow));
  NodeVersion version;
  TR_ASSERT_OK_AND_ASSIGN(version, slow->Version(Address("w-1")));
  EXPECT_EQ(version.tag, "v1.11.6");
  EXPECT_EQ(link.accepted(), 1);
}

TEST_F(ClientReadTest, WrongCertificateAuthorityFailsTheHandshake) {
  TalosContext context;
  ASSERT_NO_FATAL_FAILURE(LoadContext("prod", "os:admin", &context));
  context.ca_pem = fleet_->Cluster("prod")->kube_ca_pem;  // a CA that did not sign apid's cert
  GrpcTalosClientOptions options = TestClientOptions();
  options.timeouts.connect = std::chrono::milliseconds(300);
  options.timeouts.read = std::chrono::seconds(2);
  auto client = NewGrpcTalosClient(context, Env::Default(), options);
  ASSERT_TRUE(client.ok());
  auto version = (*client)->Version(Address("w-1"));
  EXPECT_EQ(version.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(version.status().message()), HasSubstr("no endpoint reachable"));
}

}  // namespace
}  // namespace tr::reconciler::talos
