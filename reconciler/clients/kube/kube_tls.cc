#include "reconciler/clients/kube/kube_tls.h"

#include <openssl/pem.h>

namespace tr::reconciler::kube {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

BioPtr MemBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// Every certificate of `pem` in a new store; null when there is none.
std::shared_ptr<X509_STORE> StoreFromPem(const std::string& pem) {
  BioPtr bio = MemBio(pem);
  std::shared_ptr<X509_STORE> store(X509_STORE_new(), X509_STORE_free);
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    added += X509_STORE_add_cert(store.get(), cert);
    X509_free(cert);
  }
  return added == 0 ? nullptr : store;
}

// Makes the kubeconfig's CA the only trust anchor of the client's TLS context. httplib's own
// verification is left off on purpose: before each handshake it calls
// SSL_CTX_set_default_verify_paths, which adds the system CA bundle to the store, so any public
// CA could then vouch for a cluster's API server (and parsing the bundle cost most of our CPU).
// OpenSSL verifies the chain and the host name during the handshake instead.
absl::Status TrustClusterCaOnly(httplib::SSLClient& client, X509_STORE* ca,
                                const std::string& host) {
  X509_STORE_up_ref(ca);
  client.set_ca_cert_store(ca);  // the TLS context holds that reference from here
  client.enable_server_certificate_verification(false);
  SSL_CTX* ctx = client.ssl_context();
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  const bool pinned = X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) == 1 ||
                      X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size()) == 1;
  if (!pinned) return absl::InvalidArgumentError("kubernetes server: unusable host name");
  return absl::OkStatus();
}

}  // namespace

struct KubeTls::Parsed {
  std::string token;
  std::shared_ptr<X509> cert;      // null with a token
  std::shared_ptr<EVP_PKEY> key;   // null with a token
  std::shared_ptr<X509_STORE> ca;  // never null
};

absl::StatusOr<KubeTls> KubeTls::Parse(const KubeCredentials& credentials) {
  auto parsed = std::make_shared<Parsed>();
  parsed->ca = StoreFromPem(credentials.ca_pem);
  if (parsed->ca == nullptr) {
    return absl::InvalidArgumentError("kubeconfig: no usable CA certificate");
  }
  if (credentials.client_cert_pem.empty()) {
    parsed->token = credentials.token;
    return KubeTls(std::move(parsed));
  }
  parsed->cert.reset(
      PEM_read_bio_X509(MemBio(credentials.client_cert_pem).get(), nullptr, nullptr, nullptr),
      X509_free);
  parsed->key.reset(
      PEM_read_bio_PrivateKey(MemBio(credentials.client_key_pem).get(), nullptr, nullptr, nullptr),
      EVP_PKEY_free);
  if (parsed->cert == nullptr || parsed->key == nullptr) {
    return absl::InvalidArgumentError("kubeconfig: unusable client certificate or key");
  }
  return KubeTls(std::move(parsed));
}

absl::StatusOr<std::unique_ptr<httplib::SSLClient>> KubeTls::NewClient(const std::string& host,
                                                                       int port) const {
  std::unique_ptr<httplib::SSLClient> client;
  if (parsed_->cert == nullptr) {
    client = std::make_unique<httplib::SSLClient>(host, port);
    client->set_bearer_token_auth(parsed_->token.c_str());
  } else {
    // The TLS context takes references of its own to the certificate and the key.
    client =
        std::make_unique<httplib::SSLClient>(host, port, parsed_->cert.get(), parsed_->key.get());
  }
  if (!client->is_valid()) {
    return absl::InvalidArgumentError("kubeconfig: client certificate and key do not match");
  }
  if (absl::Status s = TrustClusterCaOnly(*client, parsed_->ca.get(), host); !s.ok()) return s;
  return client;
}

}  // namespace tr::reconciler::kube
