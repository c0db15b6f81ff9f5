#include "reconciler/talos/tls_material.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>

#include "fmt/format.h"

namespace tr::reconciler::talos {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Certificate = std::unique_ptr<X509, X509Free>;
using PrivateKey = std::unique_ptr<EVP_PKEY, KeyFree>;

std::unique_ptr<BIO, BioFree> Reader(const std::string& pem) {
  return std::unique_ptr<BIO, BioFree>(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// No passphrase callback: an encrypted key is refused instead of prompting on a terminal.
int NoPassphrase(char*, int, int, void*) { return 0; }

Certificate ReadCertificate(BIO* in) {
  return Certificate(PEM_read_bio_X509(in, nullptr, NoPassphrase, nullptr));
}

absl::Status Invalid(std::string_view field, std::string_view why) {
  ERR_clear_error();  // OpenSSL's queue would otherwise leak into an unrelated later error
  return absl::InvalidArgumentError(fmt::format("{}: {}", field, why));
}

}  // namespace

absl::Status CheckTlsMaterial(const TalosContext& context) {
  auto ca_in = Reader(context.ca_pem);
  if (!ca_in || !ReadCertificate(ca_in.get())) {
    return Invalid("ca", "no certificate can be read from it (is the PEM damaged?)");
  }
  auto crt_in = Reader(context.crt_pem);
  const Certificate crt = crt_in ? ReadCertificate(crt_in.get()) : nullptr;
  if (!crt) return Invalid("crt", "not a certificate that can be read (is the PEM damaged?)");
  auto key_in = Reader(context.key_pem);
  const PrivateKey key(
      key_in ? PEM_read_bio_PrivateKey(key_in.get(), nullptr, NoPassphrase, nullptr) : nullptr);
  if (!key) {
    return Invalid("key",
                   "not a private key that can be read (is the PEM damaged, or the key "
                   "encrypted?)");
  }
  if (X509_check_private_key(crt.get(), key.get()) != 1) {
    return Invalid("crt",
                   "the certificate does not belong to key (crt and key come from "
                   "different talosconfigs?)");
  }
  if (X509_cmp_current_time(X509_get0_notAfter(crt.get())) <= 0) {
    return Invalid("crt", "the certificate has expired (talosctl config new makes a new one)");
  }
  if (X509_cmp_current_time(X509_get0_notBefore(crt.get())) >= 0) {
    return Invalid("crt", "the certificate is not valid yet (is the clock right?)");
  }
  ERR_clear_error();
  return absl::OkStatus();
}

}  // namespace tr::reconciler::talos
