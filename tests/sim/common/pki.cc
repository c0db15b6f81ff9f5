#include "tests/sim/common/pki.h"

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "fmt/format.h"

namespace tr::sim {

struct CertificateAuthority::Keys {
  std::shared_ptr<EVP_PKEY> key;
  std::shared_ptr<X509> cert;
};

namespace {

using PKey = std::shared_ptr<EVP_PKEY>;
using Cert = std::shared_ptr<X509>;

absl::Status OpenSslError(std::string_view what) {
  return absl::InternalError(fmt::format("openssl: {} failed (error {:x})", what, ERR_get_error()));
}

PKey NewKey(KeyType type) {
  EVP_PKEY* key = type == KeyType::kEd25519 ? EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519")
                                            : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  return PKey(key, EVP_PKEY_free);
}

std::string ToPem(X509* cert) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string ToPem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// Serial, validity, subject, public key; the caller adds extensions and signs.
Cert NewCert(EVP_PKEY* subject_key, std::string_view common_name,
             const std::vector<std::string>& organizations, long valid_seconds) {
  Cert cert(X509_new(), X509_free);
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  RAND_bytes(serial, sizeof serial);
  serial[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), valid_seconds);
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (const auto& org : organizations) {
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(org.c_str()), -1, -1, 0);
  }
  if (!common_name.empty()) {
    std::string cn(common_name);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  }
  X509_set_pubkey(cert.get(), subject_key);
  return cert;
}

bool Sign(X509* cert, EVP_PKEY* key) {
  const EVP_MD* md = EVP_PKEY_get_id(key) == EVP_PKEY_ED25519 ? nullptr : EVP_sha256();
  return X509_sign(cert, key, md) > 0;
}

std::string SubjectAltNames(const LeafRequest& r) {
  std::string out;
  for (const auto& ip : r.ip_sans) out += fmt::format("{}IP:{}", out.empty() ? "" : ",", ip);
  for (const auto& dns : r.dns_sans) out += fmt::format("{}DNS:{}", out.empty() ? "" : ",", dns);
  return out;
}

}  // namespace

absl::StatusOr<CertificateAuthority> CertificateAuthority::Create(std::string_view organization,
                                                                  KeyType key_type) {
  PKey key = NewKey(key_type);
  if (!key) return OpenSslError("CA key generation");
  Cert cert = NewCert(key.get(), "", {std::string(organization)}, 10L * 365 * 24 * 3600);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  if (!AddExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      !AddExtension(cert.get(), cert.get(), NID_key_usage,
                    "critical,digitalSignature,keyCertSign,cRLSign") ||
      !AddExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash") ||
      !Sign(cert.get(), key.get())) {
    return OpenSslError("CA certificate");
  }
  CertifiedKey self{ToPem(cert.get()), ToPem(key.get())};
  auto keys = std::make_shared<Keys>(Keys{key, cert});
  return CertificateAuthority(std::move(self), std::move(keys));
}

absl::StatusOr<CertifiedKey> CertificateAuthority::Issue(const LeafRequest& request) const {
  PKey key = NewKey(request.key_type);
  if (!key) return OpenSslError("leaf key generation");
  Cert cert = NewCert(key.get(), request.common_name, request.organizations, 365L * 24 * 3600);
  X509* issuer = keys_->cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer));
  const std::string key_usage = request.key_type == KeyType::kEd25519
                                    ? "critical,digitalSignature"
                                    : "critical,digitalSignature,keyAgreement";
  bool ok = AddExtension(cert.get(), issuer, NID_basic_constraints, "critical,CA:FALSE") &&
            AddExtension(cert.get(), issuer, NID_key_usage, key_usage) &&
            AddExtension(cert.get(), issuer, NID_ext_key_usage,
                         request.server ? "serverAuth" : "clientAuth") &&
            AddExtension(cert.get(), issuer, NID_authority_key_identifier, "keyid:always");
  if (ok && (!request.ip_sans.empty() || !request.dns_sans.empty())) {
    if (!AddExtension(cert.get(), issuer, NID_subject_alt_name, SubjectAltNames(request))) {
      return absl::InvalidArgumentError(
          fmt::format("bad subject alternative names {}", SubjectAltNames(request)));
    }
  }
  if (!ok || !Sign(cert.get(), keys_->key.get())) return OpenSslError("leaf certificate");
  return CertifiedKey{ToPem(cert.get()), ToPem(key.get())};
}

std::string TalosKeyPem(std::string_view pkcs8_pem) {
  std::string out(pkcs8_pem);
  for (std::string_view label : {"-----BEGIN ", "-----END "}) {
    const std::string from = fmt::format("{}PRIVATE KEY-----", label);
    const std::string to = fmt::format("{}ED25519 PRIVATE KEY-----", label);
    if (auto pos = out.find(from); pos != std::string::npos) out.replace(pos, from.size(), to);
  }
  return out;
}

std::string Base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes));
  std::string out;
  for (unsigned char c : raw) out += fmt::format("{:02x}", c);
  return out;
}

}  // namespace tr::sim
