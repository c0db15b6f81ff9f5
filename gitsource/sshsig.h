// SSH signatures as git makes them with gpg.format=ssh (`ssh-keygen -Y sign -n git`): the
// armored SSHSIG format of OpenSSH's PROTOCOL.sshsig, verified in-process with OpenSSL,
// and the allowed-signers file of ssh-keygen(1) that decides whose keys count.
//
// `VerifyGitSignature` decides as `git verify-commit` does with gpg.ssh.allowedSignersFile:
// the signature must be well formed, in the "git" namespace, cryptographically valid over
// the payload, and made by a key listed in the allowed-signers file whose `namespaces`
// option (if any) admits "git" and whose `valid-after`/`valid-before` window (if any)
// contains the signing time (git uses the committer time). Supported keys: ssh-ed25519,
// ssh-rsa (rsa-sha2-256/512 signatures, at least 2048 bits) and ecdsa-sha2-nistp256/384/521.
// Certificates (`cert-authority` lines) and security-key (sk-*) signatures are not
// supported: such a commit is refused.
//
// Why in-process and not `ssh-keygen -Y verify` (what git runs): a snapshot is read on every
// new commit of every poll, inside a small sidecar, and a verdict here is a pure function we
// can call from any thread with no temporary files, no child processes to bound and reap, and
// no dependence on the OpenSSH version of the image. The price is parsing we wrote ourselves,
// so it is held to the reference: tests/gitsource/sshsig_crosscheck_test.cc checks that this
// code and ssh-keygen agree on a corpus of good, altered, re-keyed and wrong-namespace
// signatures for every key type accepted, and feeds the parsers thousands of damaged inputs
// (run under ASan + UBSan by scripts/test). Only the cryptography is OpenSSL's.
//
// Pure (no IO); thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tr::gitsource {

struct SshSignature {
  std::string public_key;  // SSH wire-format key blob
  std::string signature_namespace;
  std::string hash_algorithm;  // "sha256" or "sha512"
  std::string signature;       // SSH wire-format signature blob
};

// Parses "-----BEGIN SSH SIGNATURE----- … -----END SSH SIGNATURE-----".
// InvalidArgument when it is not a well-formed version-1 SSHSIG.
absl::StatusOr<SshSignature> ParseSshSignature(std::string_view armored);

// OK when `signature` is valid for `message` under its own public key; FailedPrecondition
// when it is not; InvalidArgument for an unsupported or malformed key or signature.
absl::Status CheckSshSignature(const SshSignature& signature, std::string_view message);

struct AllowedSigner {
  std::string principals;               // as written: comma-separated patterns
  std::vector<std::string> namespaces;  // empty: any
  bool cert_authority = false;
  std::optional<std::chrono::system_clock::time_point> valid_after;
  std::optional<std::chrono::system_clock::time_point> valid_before;
  std::string public_key;  // SSH wire-format key blob
};

// Parses an allowed-signers file. Comment and blank lines are skipped; a malformed line is
// InvalidArgument naming its line number.
absl::StatusOr<std::vector<AllowedSigner>> ParseAllowedSigners(std::string_view text);

// "SHA256:<base64>" as ssh-keygen -l prints it.
std::string SshKeyFingerprint(std::string_view public_key_blob);

struct SignatureVerdict {
  std::string principals;   // of the allowed-signers line that matched
  std::string fingerprint;  // of the signing key
};

// The whole decision described above. FailedPrecondition with a message saying why when the
// payload must not be trusted (bad signature, unknown key, wrong namespace, out of window);
// InvalidArgument when the allowed-signers file is malformed.
absl::StatusOr<SignatureVerdict> VerifyGitSignature(
    std::string_view armored_signature, std::string_view payload, std::string_view allowed_signers,
    std::chrono::system_clock::time_point signed_at);

}  // namespace tr::gitsource
