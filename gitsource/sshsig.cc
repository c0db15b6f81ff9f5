#include "gitsource/sshsig.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/sha.h>

#include <memory>

#include "core/base64.h"
#include "fmt/format.h"
#include "gitsource/ssh_wire.h"

namespace tr::gitsource {
namespace {

constexpr std::string_view kBegin = "-----BEGIN SSH SIGNATURE-----";
constexpr std::string_view kEnd = "-----END SSH SIGNATURE-----";
constexpr std::string_view kMagic = "SSHSIG";
constexpr int kMinimumRsaBits = 2048;

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
struct ParamBldFree {
  void operator()(OSSL_PARAM_BLD* b) const { OSSL_PARAM_BLD_free(b); }
};
struct ParamFree {
  void operator()(OSSL_PARAM* p) const { OSSL_PARAM_free(p); }
};
struct BnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
struct EcdsaSigFree {
  void operator()(ECDSA_SIG* s) const { ECDSA_SIG_free(s); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using BnPtr = std::unique_ptr<BIGNUM, BnFree>;

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

BnPtr ToBignum(std::string_view mpint) {
  return BnPtr(BN_bin2bn(Bytes(mpint), static_cast<int>(mpint.size()), nullptr));
}

// Builds a public key from OpenSSL parameters (RSA or EC).
PkeyPtr KeyFromParams(const char* type, OSSL_PARAM* params) {
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> ctx(
      EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  EVP_PKEY* key = nullptr;
  if (ctx == nullptr || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params) != 1) {
    return nullptr;
  }
  return PkeyPtr(key);
}

PkeyPtr RsaKey(SshReader& key) {
  std::string_view e, n;
  if (!key.ReadString(e) || !key.ReadString(n)) return nullptr;
  BnPtr bn_e = ToBignum(e), bn_n = ToBignum(n);
  std::unique_ptr<OSSL_PARAM_BLD, ParamBldFree> build(OSSL_PARAM_BLD_new());
  if (!bn_e || !bn_n || !build || BN_num_bits(bn_n.get()) < kMinimumRsaBits ||
      OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
      OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1) {
    return nullptr;
  }
  std::unique_ptr<OSSL_PARAM, ParamFree> params(OSSL_PARAM_BLD_to_param(build.get()));
  return params ? KeyFromParams("RSA", params.get()) : nullptr;
}

PkeyPtr EcKey(SshReader& key, const char* group) {
  std::string_view curve, point;
  if (!key.ReadString(curve) || !key.ReadString(point)) return nullptr;
  std::unique_ptr<OSSL_PARAM_BLD, ParamBldFree> build(OSSL_PARAM_BLD_new());
  if (!build ||
      OSSL_PARAM_BLD_push_utf8_string(build.get(), OSSL_PKEY_PARAM_GROUP_NAME, group, 0) != 1 ||
      OSSL_PARAM_BLD_push_octet_string(build.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                       point.size()) != 1) {
    return nullptr;
  }
  std::unique_ptr<OSSL_PARAM, ParamFree> params(OSSL_PARAM_BLD_to_param(build.get()));
  return params ? KeyFromParams("EC", params.get()) : nullptr;
}

// ECDSA signatures travel as (mpint r, mpint s); OpenSSL wants DER.
std::optional<std::string> EcdsaDer(std::string_view blob) {
  SshReader reader(blob);
  std::string_view r, s;
  if (!reader.ReadString(r) || !reader.ReadString(s)) return std::nullopt;
  std::unique_ptr<ECDSA_SIG, EcdsaSigFree> sig(ECDSA_SIG_new());
  BIGNUM* bn_r = BN_bin2bn(Bytes(r), static_cast<int>(r.size()), nullptr);
  BIGNUM* bn_s = BN_bin2bn(Bytes(s), static_cast<int>(s.size()), nullptr);
  if (!sig || bn_r == nullptr || bn_s == nullptr || ECDSA_SIG_set0(sig.get(), bn_r, bn_s) != 1) {
    BN_free(bn_r);
    BN_free(bn_s);
    return std::nullopt;
  }
  unsigned char* der = nullptr;
  const int length = i2d_ECDSA_SIG(sig.get(), &der);
  if (length <= 0) return std::nullopt;
  std::string out(reinterpret_cast<char*>(der), static_cast<std::size_t>(length));
  OPENSSL_free(der);
  return out;
}

struct KeyAndScheme {
  PkeyPtr key;
  const EVP_MD* digest = nullptr;  // null for Ed25519
  std::string signature;           // in the form OpenSSL verifies
};

// Matches the signature's algorithm to the key's type and prepares both for OpenSSL.
absl::StatusOr<KeyAndScheme> Prepare(std::string_view key_blob, std::string_view sig_blob) {
  SshReader key(key_blob), sig(sig_blob);
  std::string_view key_type, sig_type, sig_bytes;
  if (!key.ReadString(key_type) || !sig.ReadString(sig_type) || !sig.ReadString(sig_bytes)) {
    return absl::InvalidArgumentError("malformed key or signature blob");
  }
  KeyAndScheme out;
  if (key_type == "ssh-ed25519" && sig_type == "ssh-ed25519") {
    std::string_view raw;
    if (!key.ReadString(raw) || raw.size() != 32 || sig_bytes.size() != 64) {
      return absl::InvalidArgumentError("malformed ssh-ed25519 key or signature");
    }
    out.key.reset(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, Bytes(raw), raw.size()));
    out.signature = std::string(sig_bytes);
  } else if (key_type == "ssh-rsa" && (sig_type == "rsa-sha2-256" || sig_type == "rsa-sha2-512")) {
    out.key = RsaKey(key);
    out.digest = sig_type == "rsa-sha2-256" ? EVP_sha256() : EVP_sha512();
    out.signature = std::string(sig_bytes);
  } else if (key_type.starts_with("ecdsa-sha2-nistp") && sig_type == key_type) {
    const std::string_view bits = key_type.substr(16);
    const char* group = bits == "256"   ? "prime256v1"
                        : bits == "384" ? "secp384r1"
                        : bits == "521" ? "secp521r1"
                                        : nullptr;
    if (group == nullptr) return absl::InvalidArgumentError("unsupported ECDSA curve");
    out.key = EcKey(key, group);
    out.digest = bits == "256" ? EVP_sha256() : bits == "384" ? EVP_sha384() : EVP_sha512();
    std::optional<std::string> der = EcdsaDer(sig_bytes);
    if (!der.has_value()) return absl::InvalidArgumentError("malformed ECDSA signature");
    out.signature = *std::move(der);
  } else {
    return absl::InvalidArgumentError(fmt::format(
        "unsupported signature: key type '{}', signature type '{}'", key_type, sig_type));
  }
  if (out.key == nullptr) {
    return absl::InvalidArgumentError(fmt::format("unusable {} public key", key_type));
  }
  return out;
}

std::string Digest(const EVP_MD* md, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), out, &length, md, nullptr);
  return std::string(reinterpret_cast<char*>(out), length);
}

}  // namespace

absl::StatusOr<SshSignature> ParseSshSignature(std::string_view armored) {
  const std::size_t begin = armored.find(kBegin);
  const std::size_t end = armored.find(kEnd);
  if (begin == std::string_view::npos || end == std::string_view::npos || end < begin) {
    return absl::InvalidArgumentError("not an armored SSH signature");
  }
  std::optional<std::string> blob =
      core::DecodeBase64(armored.substr(begin + kBegin.size(), end - begin - kBegin.size()));
  if (!blob.has_value()) return absl::InvalidArgumentError("the SSH signature is not base64");
  SshReader reader(*blob);
  std::string_view magic, key, ns, reserved, hash, sig;
  std::uint32_t version = 0;
  // ssh-keygen refuses only versions above 1 (the version is not signed), so 0 passes there too;
  // git trusts ssh-keygen's verdict, and so must we agree with it.
  if (!reader.ReadBytes(kMagic.size(), magic) || magic != kMagic || !reader.ReadU32(version) ||
      version > 1 || !reader.ReadString(key) || !reader.ReadString(ns) ||
      !reader.ReadString(reserved) || !reader.ReadString(hash) || !reader.ReadString(sig) ||
      !reader.empty()) {
    return absl::InvalidArgumentError("malformed SSHSIG blob");
  }
  return SshSignature{std::string(key), std::string(ns), std::string(hash), std::string(sig)};
}

absl::Status CheckSshSignature(const SshSignature& signature, std::string_view message) {
  const EVP_MD* hash = signature.hash_algorithm == "sha512"   ? EVP_sha512()
                       : signature.hash_algorithm == "sha256" ? EVP_sha256()
                                                              : nullptr;
  if (hash == nullptr) {
    return absl::InvalidArgumentError(
        fmt::format("unsupported SSHSIG hash '{}'", signature.hash_algorithm));
  }
  absl::StatusOr<KeyAndScheme> prepared = Prepare(signature.public_key, signature.signature);
  if (!prepared.ok()) return prepared.status();
  std::string signed_data(kMagic);
  AppendSshString(signed_data, signature.signature_namespace);
  AppendSshString(signed_data, "");  // reserved
  AppendSshString(signed_data, signature.hash_algorithm);
  AppendSshString(signed_data, Digest(hash, message));
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, prepared->digest, nullptr,
                                   prepared->key.get()) != 1) {
    return absl::InternalError("cannot initialise signature verification");
  }
  const int ok = EVP_DigestVerify(ctx.get(), Bytes(prepared->signature), prepared->signature.size(),
                                  Bytes(signed_data), signed_data.size());
  if (ok != 1) return absl::FailedPreconditionError("the signature does not verify");
  return absl::OkStatus();
}

std::string SshKeyFingerprint(std::string_view public_key_blob) {
  return "SHA256:" + EncodeBase64(Digest(EVP_sha256(), public_key_blob), /*pad=*/false);
}

}  // namespace tr::gitsource
