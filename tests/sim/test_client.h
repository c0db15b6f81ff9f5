// Test helpers: read a talosconfig the way a Talos client does (base64 PEM, the
// "ED25519 PRIVATE KEY" label relabelled for gRPC C++) and dial a simulated node over mutual TLS
// with generated stubs. Test-only; not part of the talos_sim library.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "core/base64.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "machine/image.grpc.pb.h"
#include "machine/machine.grpc.pb.h"
#include "tests/sim/fleet.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim::testing {

inline std::string Unbase64(const std::string& text) {
  return core::DecodeBase64(text).value_or("");
}

struct Talosconfig {
  std::string context;
  std::vector<std::string> endpoints;
  std::string ca, crt, key;  // PEM; key relabelled to "PRIVATE KEY"
  std::string raw_key;       // as written (label "ED25519 PRIVATE KEY")
};

inline Talosconfig ReadTalosconfig(const std::filesystem::path& path) {
  YAML::Node root = YAML::LoadFile(path.string());
  Talosconfig c;
  c.context = root["context"].as<std::string>();
  YAML::Node ctx = root["contexts"][c.context];
  for (const auto& e : ctx["endpoints"]) c.endpoints.push_back(e.as<std::string>());
  c.ca = Unbase64(ctx["ca"].as<std::string>());
  c.crt = Unbase64(ctx["crt"].as<std::string>());
  c.raw_key = Unbase64(ctx["key"].as<std::string>());
  c.key = c.raw_key;
  for (const char* label : {"BEGIN ", "END "}) {
    const std::string from = std::string(label) + "ED25519 PRIVATE KEY";
    if (auto pos = c.key.find(from); pos != std::string::npos) {
      c.key.replace(pos, from.size(), std::string(label) + "PRIVATE KEY");
    }
  }
  return c;
}

inline std::shared_ptr<grpc::Channel> Dial(const Talosconfig& config, const std::string& address) {
  grpc::SslCredentialsOptions tls;
  tls.pem_root_certs = config.ca;
  tls.pem_cert_chain = config.crt;
  tls.pem_private_key = config.key;
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 20);
  // Not a backoff: gRPC's minimum connect timeout (handshake included, 100 ms at least). At
  // 20 ms a loaded machine's first TLS handshake failed the call UNAVAILABLE "connection attempt
  // timed out before receiving SETTINGS frame".
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 10'000);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 100);
  return grpc::CreateCustomChannel(address + ":50000", grpc::SslCredentials(tls), args);
}

// A context with a deadline and, unless empty, one `node` metadata value.
inline std::unique_ptr<grpc::ClientContext> Call(
    const std::string& node = {}, std::chrono::milliseconds deadline = std::chrono::seconds(10)) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(std::chrono::system_clock::now() + deadline);
  if (!node.empty()) ctx->AddMetadata("node", node);
  return ctx;
}

// Starts the fleet described by `yaml` in a fresh state directory for the running test,
// <tmp>/<prefix>-<pid>-<test name>, stored in `dir` (remove it in TearDown). Use with
// ASSERT_NO_FATAL_FAILURE.
inline void StartTestFleet(const char* yaml, const std::string& prefix,
                           std::filesystem::path* dir, std::unique_ptr<Fleet>* fleet) {
  *dir = std::filesystem::temp_directory_path() /
         (prefix + "-" + std::to_string(getpid()) + "-" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(*dir);
  auto spec = FleetSpec::Parse(yaml);
  ASSERT_TRUE(spec.ok()) << spec.status();
  auto started = Fleet::Start(*spec, *dir);
  ASSERT_TRUE(started.ok()) << started.status();
  *fleet = std::move(*started);
}

// A fleet of one test with cluster "prod", dialled over mutual TLS as its admin: `channel_` and
// `machine_` go through the first endpoint of the admin talosconfig. Call StartProdFleet in
// SetUp (with ASSERT_NO_FATAL_FAILURE); the fleet stops and its directory goes in TearDown.
class ProdFleetTest : public ::testing::Test {
 protected:
  void StartProdFleet(const char* yaml, const std::string& prefix) {
    ASSERT_NO_FATAL_FAILURE(StartTestFleet(yaml, prefix, &dir_, &fleet_));
    auto access = fleet_->Cluster("prod");
    ASSERT_TRUE(access.ok()) << access.status();
    access_ = *access;
    admin_ = ReadTalosconfig(access_.talosconfig);
    endpoint_ = admin_.endpoints.front();
    channel_ = Dial(admin_, endpoint_);
    machine_ = machine::MachineService::NewStub(channel_);
  }
  void TearDown() override {
    if (fleet_) fleet_->Stop();
    std::filesystem::remove_all(dir_);
  }
  std::string Addr(const std::string& node) { return *fleet_->NodeAddress(node); }
  // Version.tag of the node, or "error: <message>".
  std::string Tag(const std::string& node) {
    auto ctx = Call(Addr(node));
    machine::VersionResponse resp;
    auto st = machine_->Version(ctx.get(), {}, &resp);
    return st.ok() ? resp.messages(0).version().tag() : "error: " + st.error_message();
  }
  // The node's /proc/sys/kernel/random/boot_id.
  std::string BootId(const std::string& node) {
    auto ctx = Call(Addr(node));
    machine::ReadRequest req;
    req.set_path("/proc/sys/kernel/random/boot_id");
    auto reader = machine_->Read(ctx.get(), req);
    common::Data data;
    std::string out;
    while (reader->Read(&data)) out += data.bytes();
    EXPECT_TRUE(reader->Finish().ok());
    return out;
  }
  // ImageService/Pull into the containerd instance (common.ContainerDriver, ContainerdNamespace).
  grpc::Status Pull(const std::string& node, const std::string& image, int driver, int ns) {
    auto images = machine::ImageService::NewStub(channel_);
    machine::ImageServicePullRequest pull;
    pull.mutable_containerd()->set_driver(static_cast<common::ContainerDriver>(driver));
    pull.mutable_containerd()->set_namespace_(static_cast<common::ContainerdNamespace>(ns));
    pull.set_image_ref(image);
    auto ctx = Call(Addr(node));
    auto stream = images->Pull(ctx.get(), pull);
    machine::ImageServicePullResponse item;
    while (stream->Read(&item)) {
    }
    return stream->Finish();
  }

  std::filesystem::path dir_;
  std::unique_ptr<Fleet> fleet_;
  ClusterAccess access_;
  Talosconfig admin_;
  std::string endpoint_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<machine::MachineService::Stub> machine_;
};

}  // namespace tr::sim::testing
