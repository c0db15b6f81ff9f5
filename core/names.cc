#include "core/names.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "core/text.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsLowerAlnum(char c) { return IsLower(c) || IsDigit(c); }

bool IsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// The name part of a Kubernetes qualified name, and a non-empty label value: 1-63 of
// [A-Za-z0-9-_.], starting and ending with a letter or digit.
bool IsQualifiedNamePart(std::string_view s) {
  const auto alnum = [](char c) { return IsLowerAlnum(c) || IsUpper(c); };
  if (s.empty() || s.size() > 63 || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [&alnum](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

constexpr std::string_view kQualifiedNameRule =
    "letters, digits, '-', '_' or '.', starting and ending with a letter or digit";

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(message); }

// A port number 1..65535 written in decimal without sign or leading zero.
bool ParsePort(std::string_view text, int& port) {
  if (!IsDigits(text) || text.size() > 5 || text[0] == '0') return false;
  std::from_chars(text.data(), text.data() + text.size(), port);
  return port >= 1 && port <= 65535;
}

bool IsHostLabelCaseInsensitive(std::string_view s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && !IsUpper(c) && c != '-') return false;
  }
  return true;
}

// A registry "host[:port]" as the first component of an image reference.
bool IsRegistryHost(std::string_view text) {
  std::string_view host = text;
  if (const size_t colon = text.find(':'); colon != std::string_view::npos) {
    int port = 0;
    if (!ParsePort(text.substr(colon + 1), port)) return false;
    host = text.substr(0, colon);
  }
  for (std::string_view label : Split(host, '.')) {
    if (!IsHostLabelCaseInsensitive(label)) return false;
  }
  return true;
}

// A path component of the distribution grammar: [a-z0-9]+ joined by '.', '_', '__' or '-'+.
bool IsPathComponent(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (size_t i = 0; i < s.size();) {
    if (IsLowerAlnum(s[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < s.size() && !IsLowerAlnum(s[j])) ++j;
    const std::string_view sep = s.substr(i, j - i);
    const bool dashes = sep.find_first_not_of('-') == std::string_view::npos;
    if (!(sep == "." || sep == "_" || sep == "__" || dashes)) return false;
    i = j;
  }
  return true;
}

}  // namespace

absl::Status CheckDns1123Label(std::string_view name) {
  if (IsLabel(name)) return absl::OkStatus();
  return Invalid(
      "must be a DNS-1123 label: 1-63 lowercase letters, digits or '-', starting and ending "
      "with a letter or digit");
}

absl::Status CheckDns1123Subdomain(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 253;
  for (std::string_view label : Split(name, '.')) ok = ok && IsLabel(label);
  if (ok) return absl::OkStatus();
  return Invalid(
      "must be a DNS-1123 name: lowercase letters, digits, '-' and '.', each dot-separated part "
      "starting and ending with a letter or digit, at most 253 characters");
}

bool IsIpv4Address(std::string_view text) {
  std::vector<std::string_view> parts = Split(text, '.');
  if (parts.size() != 4) return false;
  for (std::string_view part : parts) {
    if (!IsDigits(part) || part.size() > 3 || (part.size() > 1 && part[0] == '0')) return false;
    int value = 0;
    std::from_chars(part.data(), part.data() + part.size(), value);
    if (value > 255) return false;
  }
  return true;
}

bool IsIpv6Address(std::string_view text) {
  if (text.size() < 2 || text.size() > 45) return false;
  const size_t gap = text.find("::");
  if (gap != std::string_view::npos && text.find("::", gap + 1) != std::string_view::npos) {
    return false;
  }
  int groups = 0;
  auto count_groups = [&groups](std::string_view side, bool may_end_in_ipv4) {
    if (side.empty()) return true;
    std::vector<std::string_view> parts = Split(side, ':');
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string_view part = parts[i];
      if (may_end_in_ipv4 && i + 1 == parts.size() && IsIpv4Address(part)) {
        groups += 2;
        continue;
      }
      if (part.empty() || part.size() > 4) return false;
      for (char c : part) {
        if (!IsHexDigit(c)) return false;
      }
      ++groups;
    }
    return true;
  };
  if (gap == std::string_view::npos) return count_groups(text, true) && groups == 8;
  return count_groups(text.substr(0, gap), false) && count_groups(text.substr(gap + 2), true) &&
         groups <= 7;
}

absl::Status CheckNodeAddress(std::string_view address) {
  if (IsIpv4Address(address) || IsIpv6Address(address)) return absl::OkStatus();
  std::vector<std::string_view> labels = Split(address, '.');
  if (CheckDns1123Subdomain(address).ok() && !IsDigits(labels.back())) return absl::OkStatus();
  return Invalid(
      "must be an IPv4 address, an IPv6 address or a lowercase DNS name, without a port");
}

absl::StatusOr<Endpoint> ParseEndpoint(std::string_view text) {
  const auto bad = [text] {
    return Invalid(
        fmt::format("endpoint \"{}\" must be host or host:port with a port from 1 to 65535", text));
  };
  Endpoint endpoint;
  std::string_view host = text;
  std::string_view port;
  if (text.starts_with("[")) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return bad();
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (!rest.starts_with(":")) return bad();
      port = rest.substr(1);
      if (port.empty()) return bad();
    }
    if (!IsIpv6Address(host)) return bad();
  } else if (const size_t colon = text.find(':');
             colon != std::string_view::npos &&
             text.find(':', colon + 1) == std::string_view::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (port.empty()) return bad();
  }
  if (!port.empty() && !ParsePort(port, endpoint.port)) return bad();
  if (!CheckNodeAddress(host).ok()) return bad();
  endpoint.host = std::string(host);
  return endpoint;
}

absl::Status CheckCredentialsName(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 253 && name.front() != '.' &&
            name.find("..") == std::string_view::npos;
  for (char c : name)
    ok = ok && (IsLowerAlnum(c) || IsUpper(c) || c == '.' || c == '_' || c == '-');
  if (ok) return absl::OkStatus();
  return Invalid(
      "must be a simple name (letters, digits, '.', '_', '-'; no slashes, no \"..\", not "
      "starting with '.'), naming a talosconfig in the credentials directory");
}

absl::Status CheckSchematicId(std::string_view id) {
  const bool hex = std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
  if (id.size() != 64 || !hex) {
    return absl::InvalidArgumentError("must be a schematic ID: 64 lowercase hex digits");
  }
  return absl::OkStatus();
}

absl::Status CheckImageFactoryUrl(std::string_view url) {
  std::string_view host;
  for (std::string_view scheme : {"https://", "http://"}) {
    if (url.starts_with(scheme)) host = url.substr(scheme.size());
  }
  if (host.empty()) return Invalid("must be an http:// or https:// URL");
  if (host.find_first_of("/?#@") != std::string_view::npos) {
    return Invalid("must be scheme://host[:port] only: no path, query, fragment or user");
  }
  if (!IsRegistryHost(host)) {
    return Invalid("host must be a DNS name or IPv4 address, with a port from 1 to 65535");
  }
  return absl::OkStatus();
}

absl::Status CheckImageRepository(std::string_view repository) {
  if (repository.empty()) return Invalid("must not be empty");
  if (repository.size() > 255) return Invalid("must be at most 255 characters");
  for (char c : repository) {
    if (!IsLowerAlnum(c) && !IsUpper(c) && c != '.' && c != '_' && c != '-' && c != '/' &&
        c != ':' && c != '@') {
      return Invalid("must not contain whitespace or shell metacharacters");
    }
  }
  if (repository.find('@') != std::string_view::npos) {
    return Invalid("must not have a digest (@sha256:...); write the repository only");
  }
  std::vector<std::string_view> parts = Split(repository, '/');
  size_t first_path = 0;
  if (parts.size() > 1 &&
      (parts[0].find_first_of(".:") != std::string_view::npos || parts[0] == "localhost")) {
    if (!IsRegistryHost(parts[0])) {
      return Invalid("registry must be host or host:port with a port from 1 to 65535");
    }
    first_path = 1;
  }
  for (size_t i = first_path; i < parts.size(); ++i) {
    const std::string_view part = parts[i];
    if (part.find(':') != std::string_view::npos) {
      return Invalid("must not have a tag; the reconciler adds :v<talos.version> itself");
    }
    for (char c : part) {
      if (IsUpper(c)) return Invalid("repository path must be lowercase");
    }
    if (!IsPathComponent(part)) {
      return Invalid(fmt::format(
          "path component \"{}\" must be lowercase letters and digits joined by '.', '_', "
          "'__' or '-'",
          part));
    }
  }
  if (first_path == 0) {
    // containerd stores a pull under the normalized name (docker.io/...) but Talos 1.13+'s
    // LifecycleService/Upgrade looks the image up as written: a short name is not found.
    return Invalid(fmt::format(
        "must start with its registry host, e.g. \"docker.io/{}{}\": Talos 1.13+ installs an "
        "image by the name as written but stores pulls under the full name",
        parts.size() == 1 ? "library/" : "", repository));
  }
  return absl::OkStatus();
}

absl::Status CheckTimezoneName(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 64;
  for (std::string_view part : Split(name, '/')) {
    ok = ok && !part.empty() && (IsLower(part[0]) || IsUpper(part[0]));
    for (char c : part) {
      ok = ok && (IsLowerAlnum(c) || IsUpper(c) || c == '_' || c == '+' || c == '-');
    }
  }
  if (ok) return absl::OkStatus();
  return Invalid("must be an IANA time-zone name such as UTC or Europe/Oslo");
}

absl::Status CheckLabelKey(std::string_view key) {
  if (key.empty()) return Invalid("must not be empty");
  const size_t slash = key.find('/');
  std::string_view name = key;
  if (slash != std::string_view::npos) {
    if (key.find('/', slash + 1) != std::string_view::npos) {
      return Invalid("must be name or prefix/name, with one '/' at most");
    }
    const std::string_view prefix = key.substr(0, slash);
    if (prefix.empty()) return Invalid("prefix before '/' must not be empty");
    if (absl::Status s = CheckDns1123Subdomain(prefix); !s.ok()) {
      return Invalid(fmt::format("prefix \"{}\" {}", prefix, std::string(s.message())));
    }
    name = key.substr(slash + 1);
    if (name.empty()) return Invalid("name after '/' must not be empty");
  }
  if (name.size() > 63) {
    return Invalid(fmt::format("name must be at most 63 characters, not {}", name.size()));
  }
  if (!IsQualifiedNamePart(name)) {
    return Invalid(fmt::format("name \"{}\" must be {}", name, kQualifiedNameRule));
  }
  return absl::OkStatus();
}

absl::Status CheckLabelValue(std::string_view value) {
  if (value.empty()) return absl::OkStatus();
  if (value.size() > 63) {
    return Invalid(fmt::format("must be at most 63 characters, not {}", value.size()));
  }
  if (!IsQualifiedNamePart(value)) {
    return Invalid(fmt::format("must be empty or {}", kQualifiedNameRule));
  }
  return absl::OkStatus();
}

}  // namespace tr::core
