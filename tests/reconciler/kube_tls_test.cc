// KubeTls: a kubeconfig's certificate, key and CA parsed once and shared by the TLS contexts of
// every connection of one Kubernetes client; a bad one refused when parsed, naming what is bad.
// (The handshakes themselves, trusted and refused: http_kube_client_test.cc.)
#include "reconciler/clients/kube/kube_tls.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <optional>
#include <string>

#include "tests/sim/common/pki.h"

namespace tr::reconciler::kube {
namespace {

class KubeTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<sim::CertificateAuthority> ca =
        sim::CertificateAuthority::Create("kubernetes", sim::KeyType::kEcdsaP256);
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_.emplace(*std::move(ca));
    client_ = Leaf("admin");
    other_ = Leaf("someone-else");
  }

  sim::CertifiedKey Leaf(const std::string& name) const {
    sim::LeafRequest request;
    request.common_name = name;
    request.organizations = {"system:masters"};
    request.key_type = sim::KeyType::kEcdsaP256;
    absl::StatusOr<sim::CertifiedKey> leaf = ca_->Issue(request);
    EXPECT_TRUE(leaf.ok()) << leaf.status();
    return leaf.ok() ? *leaf : sim::CertifiedKey{};
  }

  KubeCredentials WithClientCertificate() const {
    KubeCredentials credentials;
    credentials.server = "https://127.0.0.1:6443";
    credentials.ca_pem = ca_->cert_pem();
    credentials.client_cert_pem = client_.cert_pem;
    credentials.client_key_pem = client_.key_pem;
    return credentials;
  }

  std::optional<sim::CertificateAuthority> ca_;
  sim::CertifiedKey client_;
  sim::CertifiedKey other_;
};

// The number of certificates in a TLS context's trust store.
size_t TrustedCertificates(SSL_CTX* ctx) {
  size_t certificates = 0;
  STACK_OF(X509_OBJECT)* objects = X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx));
  for (int i = 0; i < sk_X509_OBJECT_num(objects); ++i) {
    if (X509_OBJECT_get_type(sk_X509_OBJECT_value(objects, i)) == X509_LU_X509) ++certificates;
  }
  return certificates;
}

TEST_F(KubeTlsTest, EveryClientSharesTheCaAndCertificateParsedOnce) {
  absl::StatusOr<KubeTls> tls = KubeTls::Parse(WithClientCertificate());
  ASSERT_TRUE(tls.ok()) << tls.status();
  auto first = tls->NewClient("127.0.0.1", 6443);
  auto second = tls->NewClient("127.0.0.1", 6443);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  SSL_CTX* a = (*first)->ssl_context();
  SSL_CTX* b = (*second)->ssl_context();
  ASSERT_NE(a, b) << "each connection has a TLS context of its own";
  EXPECT_EQ(SSL_CTX_get_cert_store(a), SSL_CTX_get_cert_store(b));
  EXPECT_EQ(SSL_CTX_get0_certificate(a), SSL_CTX_get0_certificate(b));
  EXPECT_NE(SSL_CTX_get0_certificate(a), nullptr);
  EXPECT_EQ(SSL_CTX_get_verify_mode(a), SSL_VERIFY_PEER);
}

TEST_F(KubeTlsTest, AClientKeepsItsTrustAfterTheParsedMaterialIsGone) {
  absl::StatusOr<std::unique_ptr<httplib::SSLClient>> client;
  {
    absl::StatusOr<KubeTls> tls = KubeTls::Parse(WithClientCertificate());
    ASSERT_TRUE(tls.ok()) << tls.status();
    client = tls->NewClient("127.0.0.1", 6443);
  }
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ(TrustedCertificates((*client)->ssl_context()), 1u);
  EXPECT_NE(SSL_CTX_get0_certificate((*client)->ssl_context()), nullptr);
}

TEST_F(KubeTlsTest, ATokenClientPresentsNoCertificate) {
  KubeCredentials credentials;
  credentials.ca_pem = ca_->cert_pem();
  credentials.token = "a-token";
  absl::StatusOr<KubeTls> tls = KubeTls::Parse(credentials);
  ASSERT_TRUE(tls.ok()) << tls.status();
  auto client = tls->NewClient("kube.example.internal", 6443);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ(SSL_CTX_get0_certificate((*client)->ssl_context()), nullptr);
  EXPECT_EQ(TrustedCertificates((*client)->ssl_context()), 1u);
}

TEST_F(KubeTlsTest, ACaWithoutACertificateIsRefusedWhenParsed) {
  KubeCredentials credentials = WithClientCertificate();
  credentials.ca_pem = "not a certificate";
  absl::StatusOr<KubeTls> tls = KubeTls::Parse(credentials);
  ASSERT_FALSE(tls.ok());
  EXPECT_EQ(tls.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(tls.status().message().find("CA"), std::string::npos) << tls.status();
}

TEST_F(KubeTlsTest, AnUnreadableKeyIsRefusedWhenParsedWithoutShowingIt) {
  KubeCredentials credentials = WithClientCertificate();
  credentials.client_key_pem = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n";
  absl::StatusOr<KubeTls> tls = KubeTls::Parse(credentials);
  ASSERT_FALSE(tls.ok());
  EXPECT_EQ(tls.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(tls.status().message().find("c2VjcmV0"), std::string::npos) << tls.status();
}

TEST_F(KubeTlsTest, ACertificateWithAnotherKeyIsRefused) {
  KubeCredentials credentials = WithClientCertificate();
  credentials.client_key_pem = other_.key_pem;
  absl::StatusOr<KubeTls> tls = KubeTls::Parse(credentials);
  ASSERT_TRUE(tls.ok()) << tls.status() << " (each parses; they only disagree)";
  auto client = tls->NewClient("127.0.0.1", 6443);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(client.status().message().find("do not match"), std::string::npos) << client.status();
}

}  // namespace
}  // namespace tr::reconciler::kube
