// The allowed-signers file format of ssh-keygen(1) ("ALLOWED SIGNERS") and the decision
// that uses it (VerifyGitSignature). Declared in sshsig.h.
#include <fnmatch.h>

#include <ctime>

#include "core/base64.h"
#include "core/text.h"
#include "fmt/format.h"
#include "gitsource/ssh_wire.h"
#include "gitsource/sshsig.h"

namespace tr::gitsource {
namespace {

constexpr std::string_view kGitNamespace = "git";

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// Takes one whitespace-delimited token; double quotes protect whitespace inside it.
std::optional<std::string_view> NextToken(std::string_view& line) {
  line = TrimLeft(line);
  if (line.empty()) return std::nullopt;
  bool quoted = false;
  std::size_t i = 0;
  for (; i < line.size(); ++i) {
    if (line[i] == '"') quoted = !quoted;
    if (!quoted && (line[i] == ' ' || line[i] == '\t')) break;
  }
  if (quoted) return std::nullopt;
  const std::string_view token = line.substr(0, i);
  line.remove_prefix(i);
  return token;
}

std::string Unquote(std::string_view s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return std::string(s);
}

bool IsKeyType(std::string_view token) {
  return token.starts_with("ssh-") || token.starts_with("ecdsa-") || token.starts_with("sk-");
}

// "YYYYMMDD[HHMM[SS]][Z]": UTC with Z, local time without.
std::optional<std::chrono::system_clock::time_point> ParseTime(std::string_view s) {
  const bool utc = !s.empty() && (s.back() == 'Z' || s.back() == 'z');
  if (utc) s.remove_suffix(1);
  if ((s.size() != 8 && s.size() != 12 && s.size() != 14) || !core::IsDigits(s)) {
    return std::nullopt;
  }
  const auto field = [&](std::size_t at, std::size_t n) {
    return at + n <= s.size() ? std::stoi(std::string(s.substr(at, n))) : 0;
  };
  // A field out of its range is refused rather than carried over (month 15), and the years
  // are those a clock can hold: 98181519 overflowed the nanoseconds (found by sshsig_fuzz).
  const int year = field(0, 4), month = field(4, 2), day = field(6, 2);
  const int hour = field(8, 2), minute = field(10, 2), second = field(12, 2);
  if (year < 1970 || year > 2200 || month < 1 || month > 12 || day < 1 || day > 31 ||
      hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  tm.tm_isdst = -1;
  const std::time_t t = utc ? timegm(&tm) : mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return std::chrono::system_clock::from_time_t(t);
}

// Applies one comma-separated option list ("cert-authority,namespaces=\"git\"").
bool ParseOptions(std::string_view options, AllowedSigner& signer) {
  std::string current;
  bool quoted = false;
  std::vector<std::string> list;
  for (char c : options) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) {
      list.push_back(std::move(current));
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  list.push_back(std::move(current));
  for (const std::string& option : list) {
    const std::size_t eq = option.find('=');
    const std::string name = option.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : Unquote(option.substr(eq + 1));
    if (name == "cert-authority") {
      signer.cert_authority = true;
    } else if (name == "namespaces") {
      for (std::string_view ns : core::Split(value, ',')) signer.namespaces.emplace_back(ns);
    } else if (name == "valid-after" || name == "valid-before") {
      auto when = ParseTime(value);
      if (!when.has_value()) return false;
      (name == "valid-after" ? signer.valid_after : signer.valid_before) = when;
    } else {
      return false;
    }
  }
  return true;
}

std::optional<AllowedSigner> ParseLine(std::string_view line) {
  AllowedSigner signer;
  std::optional<std::string_view> token = NextToken(line);
  if (!token.has_value()) return std::nullopt;
  signer.principals = Unquote(*token);
  token = NextToken(line);
  if (token.has_value() && !IsKeyType(*token)) {
    if (!ParseOptions(*token, signer)) return std::nullopt;
    token = NextToken(line);
  }
  std::optional<std::string_view> key = NextToken(line);
  if (!token.has_value() || !key.has_value()) return std::nullopt;
  std::optional<std::string> blob = core::DecodeBase64(*key);
  if (!blob.has_value()) return std::nullopt;
  SshReader reader(*blob);
  std::string_view embedded_type;
  if (!reader.ReadString(embedded_type) || embedded_type != *token) return std::nullopt;
  signer.public_key = *std::move(blob);
  return signer;
}

bool NamespaceAllowed(const AllowedSigner& signer) {
  if (signer.namespaces.empty()) return true;
  bool allowed = false;
  for (const std::string& pattern : signer.namespaces) {
    const bool negated = pattern.starts_with("!");
    const std::string glob = negated ? pattern.substr(1) : pattern;
    if (fnmatch(glob.c_str(), std::string(kGitNamespace).c_str(), 0) == 0) {
      if (negated) return false;
      allowed = true;
    }
  }
  return allowed;
}

}  // namespace

absl::StatusOr<std::vector<AllowedSigner>> ParseAllowedSigners(std::string_view text) {
  std::vector<AllowedSigner> signers;
  int number = 0;
  for (std::string_view line : core::Split(text, '\n')) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line = TrimLeft(line);
    if (line.empty() || line.front() == '#') continue;
    std::optional<AllowedSigner> signer = ParseLine(line);
    if (!signer.has_value()) {
      return absl::InvalidArgumentError(
          fmt::format("allowed signers line {}: not 'principals [options] keytype key'", number));
    }
    signers.push_back(*std::move(signer));
  }
  return signers;
}

absl::StatusOr<SignatureVerdict> VerifyGitSignature(
    std::string_view armored_signature, std::string_view payload, std::string_view allowed_signers,
    std::chrono::system_clock::time_point signed_at) {
  absl::StatusOr<std::vector<AllowedSigner>> signers = ParseAllowedSigners(allowed_signers);
  if (!signers.ok()) return signers.status();
  absl::StatusOr<SshSignature> signature = ParseSshSignature(armored_signature);
  if (!signature.ok()) {
    return absl::FailedPreconditionError(fmt::format("the SSH signature is malformed: {}",
                                                     std::string(signature.status().message())));
  }
  if (signature->signature_namespace != kGitNamespace) {
    return absl::FailedPreconditionError(fmt::format(
        "the signature is for namespace '{}', not 'git'", signature->signature_namespace));
  }
  const std::string fingerprint = SshKeyFingerprint(signature->public_key);
  if (absl::Status s = CheckSshSignature(*signature, payload); !s.ok()) {
    return absl::FailedPreconditionError(
        fmt::format("the signature by {} is not valid: {}", fingerprint, std::string(s.message())));
  }
  std::string excluded;
  for (const AllowedSigner& signer : *signers) {
    if (signer.cert_authority || signer.public_key != signature->public_key) continue;
    if (!NamespaceAllowed(signer)) {
      excluded = "its allowed-signers entry does not admit the 'git' namespace";
    } else if ((signer.valid_after && signed_at < *signer.valid_after) ||
               (signer.valid_before && signed_at > *signer.valid_before)) {
      excluded = "it was made outside its allowed-signers validity window";
    } else {
      return SignatureVerdict{signer.principals, fingerprint};
    }
  }
  if (!excluded.empty()) {
    return absl::FailedPreconditionError(
        fmt::format("the signature by {} is not accepted: {}", fingerprint, excluded));
  }
  return absl::FailedPreconditionError(fmt::format(
      "the commit is signed by {}, a key not in the allowed signers file", fingerprint));
}

}  // namespace tr::gitsource
