// The simulator's PKI checked with OpenSSL's own verification and the openssl CLI, plus the
// talosconfig key quirk and an ECDSA interop handshake.
#include "tests/sim/common/pki.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <fstream>

#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "machine/machine.grpc.pb.h"
#include "tests/sim/fleet.h"
#include "tests/sim/api/node_services.h"
#include "tests/sim/test_client.h"

namespace tr::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::unique_ptr<X509, decltype(&X509_free)> ReadCert(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  return {PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free};
}

// X509_verify_cert of `leaf` against `ca` with `purpose`; empty on success, else the reason.
std::string Verify(const std::string& ca_pem, const std::string& leaf_pem, int purpose) {
  auto ca = ReadCert(ca_pem);
  auto leaf = ReadCert(leaf_pem);
  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store(X509_STORE_new(), X509_STORE_free);
  X509_STORE_add_cert(store.get(), ca.get());
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> ctx(X509_STORE_CTX_new(),
                                                                      X509_STORE_CTX_free);
  X509_STORE_CTX_init(ctx.get(), store.get(), leaf.get(), nullptr);
  X509_STORE_CTX_set_purpose(ctx.get(), purpose);
  if (X509_verify_cert(ctx.get()) == 1) return "";
  return X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()));
}

TEST(PkiTest, Ed25519ChainVerifiesWithOpenSsl) {
  auto ca = CertificateAuthority::Create("talos", KeyType::kEd25519);
  ASSERT_TRUE(ca.ok()) << ca.status();
  auto server = ca->Issue({.common_name = "cp-1",
                           .organizations = {"talos"},
                           .ip_sans = {"127.0.42.1"},
                           .dns_sans = {"cp-1"},
                           .server = true,
                           .key_type = KeyType::kEd25519});
  ASSERT_TRUE(server.ok());
  auto client = ca->Issue({.common_name = "admin",
                           .organizations = {"os:admin"},
                           .ip_sans = {},
                           .dns_sans = {},
                           .server = false,
                           .key_type = KeyType::kEd25519});
  ASSERT_TRUE(client.ok());
  EXPECT_EQ(Verify(ca->cert_pem(), server->cert_pem, X509_PURPOSE_SSL_SERVER), "");
  EXPECT_EQ(Verify(ca->cert_pem(), client->cert_pem, X509_PURPOSE_SSL_CLIENT), "");
  // Client certificates are for clients only (ExtKeyUsage exactly clientAuth).
  EXPECT_NE(Verify(ca->cert_pem(), client->cert_pem, X509_PURPOSE_SSL_SERVER), "");
  auto other = CertificateAuthority::Create("talos", KeyType::kEd25519);
  EXPECT_NE(Verify(other->cert_pem(), client->cert_pem, X509_PURPOSE_SSL_CLIENT), "");

  auto leaf = ReadCert(server->cert_pem);
  EXPECT_EQ(X509_check_ip_asc(leaf.get(), "127.0.42.1", 0), 1);
  EXPECT_EQ(X509_check_host(leaf.get(), "cp-1", 0, 0, nullptr), 1);
  EXPECT_EQ(EVP_PKEY_get_id(X509_get0_pubkey(leaf.get())), EVP_PKEY_ED25519);
  EXPECT_EQ(RolesFromCertificate(client->cert_pem), std::set<std::string>{"os:admin"});
}

TEST(PkiTest, OpenSslCliVerifiesTheChain) {
  auto ca = CertificateAuthority::Create("talos", KeyType::kEd25519);
  auto client = ca->Issue({.common_name = "reader",
                           .organizations = {"os:reader"},
                           .ip_sans = {},
                           .dns_sans = {},
                           .server = false,
                           .key_type = KeyType::kEd25519});
  ASSERT_TRUE(client.ok());
  const auto dir = std::filesystem::temp_directory_path() / ("sim-pki-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ca.pem") << ca->cert_pem();
  std::ofstream(dir / "client.pem") << client->cert_pem;
  const std::string cmd = "openssl verify -purpose sslclient -CAfile " + (dir / "ca.pem").string() +
                          " " + (dir / "client.pem").string() + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buf[512] = {};
  std::string out;
  while (fgets(buf, sizeof buf, pipe) != nullptr) out += buf;
  EXPECT_EQ(pclose(pipe), 0) << out;
  EXPECT_THAT(out, HasSubstr(": OK"));
  std::filesystem::remove_all(dir);
}

TEST(PkiTest, TalosKeyLabelAndBase64) {
  auto ca = CertificateAuthority::Create("talos", KeyType::kEd25519);
  auto client = ca->Issue({.common_name = "a",
                           .organizations = {"os:admin"},
                           .ip_sans = {},
                           .dns_sans = {},
                           .server = false,
                           .key_type = KeyType::kEd25519});
  ASSERT_TRUE(client.ok());
  EXPECT_THAT(client->key_pem, StartsWith("-----BEGIN PRIVATE KEY-----"));
  const std::string talos = TalosKeyPem(client->key_pem);
  EXPECT_THAT(talos, StartsWith("-----BEGIN ED25519 PRIVATE KEY-----"));
  EXPECT_THAT(talos, HasSubstr("-----END ED25519 PRIVATE KEY-----"));
  EXPECT_EQ(Base64("talos"), "dGFsb3M=");
  EXPECT_EQ(testing::Unbase64(Base64(talos)), talos);
  EXPECT_EQ(RandomHex(8).size(), 16u);
}

TEST(PkiTest, BadSubjectAlternativeNameIsInvalidArgument) {
  auto ca = CertificateAuthority::Create("talos", KeyType::kEd25519);
  auto bad = ca->Issue({.common_name = "x",
                        .organizations = {},
                        .ip_sans = {"not-an-ip"},
                        .dns_sans = {},
                        .server = true,
                        .key_type = KeyType::kEd25519});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

// Interop: the same mutual-TLS setup with ECDSA P-256 material (what facts §10 suggested as a
// fallback) also works against a gRPC server, so either key type serves the client.
TEST(PkiTest, EcdsaMutualTlsInterop) {
  auto ca = CertificateAuthority::Create("talos", KeyType::kEcdsaP256);
  auto server = ca->Issue({.common_name = "cp",
                           .organizations = {"talos"},
                           .ip_sans = {"127.0.0.1"},
                           .dns_sans = {},
                           .server = true,
                           .key_type = KeyType::kEcdsaP256});
  auto client = ca->Issue({.common_name = "admin",
                           .organizations = {"os:admin"},
                           .ip_sans = {},
                           .dns_sans = {},
                           .server = false,
                           .key_type = KeyType::kEcdsaP256});
  ASSERT_TRUE(server.ok() && client.ok());
  ClusterSpec spec;
  spec.name = "ecdsa";
  NodeSpec node;
  node.name = "cp";
  node.role = NodeRole::kControlPlane;
  node.talos_version = "v1.11.6";
  node.kubernetes_version = "1.34.1";
  spec.nodes = {node};
  auto clock = std::make_shared<ManualScheduler>();
  SimCluster cluster(spec, Timings{}, 1.0, clock, nullptr);
  cluster.Boot({"127.0.0.1"});
  grpc::SslServerCredentialsOptions tls(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  tls.pem_root_certs = ca->cert_pem();
  tls.pem_key_cert_pairs.push_back({server->key_pem, server->cert_pem});
  MachineServiceImpl service(ApidRouter(&cluster, cluster.nodes()[0].get(), [](std::string_view) {
    return std::pair<SimCluster*, SimNode*>{};
  }));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(tls), &port);
  builder.RegisterService(&service);
  auto grpc_server = builder.BuildAndStart();
  ASSERT_NE(port, 0);
  grpc::SslCredentialsOptions client_tls;
  client_tls.pem_root_certs = ca->cert_pem();
  client_tls.pem_cert_chain = client->cert_pem;
  client_tls.pem_private_key = client->key_pem;
  auto stub = machine::MachineService::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::SslCredentials(client_tls)));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  machine::VersionResponse resp;
  auto st = stub->Version(&ctx, {}, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(resp.messages(0).version().tag(), "v1.11.6");
  cluster.Stop();
  grpc_server->Shutdown();
}

}  // namespace
}  // namespace tr::sim
