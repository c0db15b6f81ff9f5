#include "core/version.h"

#include <charconv>
#include <climits>
#include <vector>

#include "core/text.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

// A numeric semver identifier: digits, no leading zero (except "0"), fits an int.
bool ParseNumber(std::string_view s, int& out) {
  if (!IsDigits(s) || (s.size() > 1 && s[0] == '0') || s.size() > 9) return false;
  std::from_chars(s.data(), s.data() + s.size(), out);
  return true;
}

bool IsIdentifierChar(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

bool IsValidPrerelease(std::string_view s) {
  for (std::string_view part : Split(s, '.')) {
    if (part.empty()) return false;
    for (char c : part) {
      if (!IsIdentifierChar(c)) return false;
    }
    if (IsDigits(part) && part.size() > 1 && part[0] == '0') return false;
  }
  return true;
}

bool IsHex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Splits a trailing "-N-g<sha>" describe suffix off `rest`, if there is one.
void StripDescribeSuffix(std::string_view& rest, Version& v) {
  const size_t g = rest.rfind("-g");
  if (g == std::string_view::npos) return;
  std::string_view sha = rest.substr(g + 2);
  if (sha.size() < 7 || sha.size() > 40 || !IsHex(sha)) return;
  std::string_view head = rest.substr(0, g);
  const size_t dash = head.rfind('-');
  if (dash == std::string_view::npos) return;
  int commits = 0;
  if (!ParseNumber(head.substr(dash + 1), commits)) return;
  v.commits_since_tag = commits;
  v.commit = std::string(sha);
  rest = head.substr(0, dash);
}

absl::Status Invalid(std::string_view kind, std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format("invalid {} version \"{}\": {}", kind, text, why));
}

absl::StatusOr<Version> ParseVersion(std::string_view text, std::string_view kind,
                                     bool allow_describe) {
  std::string_view rest = text;
  if (rest.empty()) return Invalid(kind, text, "empty");
  if (rest.front() == 'v') rest.remove_prefix(1);
  Version v;
  if (allow_describe) {
    if (rest.ends_with("-dirty")) {
      v.dirty = true;
      rest.remove_suffix(6);
    }
    StripDescribeSuffix(rest, v);
  }
  std::string_view core_part = rest;
  if (const size_t dash = rest.find('-'); dash != std::string_view::npos) {
    core_part = rest.substr(0, dash);
    std::string_view pre = rest.substr(dash + 1);
    if (!IsValidPrerelease(pre)) {
      return Invalid(kind, text, "prerelease must be dot-separated [0-9A-Za-z-] identifiers");
    }
    v.prerelease = std::string(pre);
  }
  std::vector<std::string_view> parts = Split(core_part, '.');
  if (parts.size() != 3) return Invalid(kind, text, "want MAJOR.MINOR.PATCH");
  if (!ParseNumber(parts[0], v.major) || !ParseNumber(parts[1], v.minor) ||
      !ParseNumber(parts[2], v.patch)) {
    return Invalid(kind, text, "MAJOR, MINOR and PATCH must be numbers without leading zeros");
  }
  return v;
}

// Semver precedence of two prerelease strings; an empty one (a release) is the highest.
std::strong_ordering ComparePrerelease(std::string_view a, std::string_view b) {
  if (a == b) return std::strong_ordering::equal;
  if (a.empty()) return std::strong_ordering::greater;
  if (b.empty()) return std::strong_ordering::less;
  std::vector<std::string_view> pa = Split(a, '.');
  std::vector<std::string_view> pb = Split(b, '.');
  for (size_t i = 0; i < pa.size() && i < pb.size(); ++i) {
    const bool na = IsDigits(pa[i]);
    const bool nb = IsDigits(pb[i]);
    if (na && nb) {
      if (pa[i].size() != pb[i].size()) return pa[i].size() <=> pb[i].size();
      if (auto c = pa[i].compare(pb[i]); c != 0) return c <=> 0;
    } else if (na != nb) {
      return na ? std::strong_ordering::less : std::strong_ordering::greater;
    } else if (auto c = pa[i].compare(pb[i]); c != 0) {
      return c <=> 0;
    }
  }
  return pa.size() <=> pb.size();
}

}  // namespace

std::string MinorVersion::ToString() const { return fmt::format("{}.{}", major, minor); }

int MinorDistance(MinorVersion from, MinorVersion to) {
  if (from.major != to.major) return from.major < to.major ? INT_MAX : INT_MIN;
  return to.minor - from.minor;
}

std::string Version::ToString() const {
  std::string s = fmt::format("{}.{}.{}", major, minor, patch);
  if (!prerelease.empty()) s += "-" + prerelease;
  return s;
}

std::string Version::Tag() const {
  std::string s = "v" + ToString();
  if (commits_since_tag > 0) s += fmt::format("-{}-g{}", commits_since_tag, commit);
  if (dirty) s += "-dirty";
  return s;
}

std::strong_ordering Version::operator<=>(const Version& o) const {
  if (auto c = major <=> o.major; c != 0) return c;
  if (auto c = minor <=> o.minor; c != 0) return c;
  if (auto c = patch <=> o.patch; c != 0) return c;
  if (auto c = ComparePrerelease(prerelease, o.prerelease); c != 0) return c;
  if (auto c = commits_since_tag <=> o.commits_since_tag; c != 0) return c;
  if (auto c = commit.compare(o.commit); c != 0) return c <=> 0;
  return dirty <=> o.dirty;
}

absl::StatusOr<Version> ParseTalosVersion(std::string_view text) {
  return ParseVersion(text, "Talos", /*allow_describe=*/true);
}

absl::StatusOr<Version> ParseKubernetesVersion(std::string_view text) {
  return ParseVersion(text, "Kubernetes", /*allow_describe=*/false);
}

absl::StatusOr<MinorVersion> ParseMinorVersion(std::string_view text) {
  std::string_view rest = text;
  if (!rest.empty() && rest.front() == 'v') rest.remove_prefix(1);
  std::vector<std::string_view> parts = Split(rest, '.');
  MinorVersion m;
  if (parts.size() != 2 || !ParseNumber(parts[0], m.major) || !ParseNumber(parts[1], m.minor)) {
    return absl::InvalidArgumentError(
        fmt::format("invalid minor version \"{}\": want MAJOR.MINOR", text));
  }
  return m;
}

}  // namespace tr::core
