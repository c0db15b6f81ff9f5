#include "gitsource/remote_url.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "core/text.h"
#include "fmt/format.h"

namespace tr::gitsource {
namespace {

struct Scheme {
  std::string_view prefix;
  Transport transport;
};

constexpr std::array<Scheme, 7> kSchemes = {{
    {"https://", Transport::kHttps},
    {"http://", Transport::kHttp},
    {"ssh://", Transport::kSsh},
    {"git+ssh://", Transport::kSsh},
    {"ssh+git://", Transport::kSsh},
    {"git://", Transport::kGit},
    {"file://", Transport::kFile},
}};

bool HasControlCharacters(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// Splits "user@host:port" (the authority) into its parts.
absl::Status ParseAuthority(std::string_view authority, RemoteUrl& out) {
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    if (userinfo.find(':') != std::string_view::npos) {
      return absl::InvalidArgumentError(
          "the remote URL contains a password; put credentials in a file instead");
    }
    out.user = std::string(userinfo);
    authority.remove_prefix(at + 1);
  }
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError("the remote URL has an unclosed '[' in its host");
    }
    out.host = std::string(authority.substr(1, close - 1));
    authority.remove_prefix(close + 1);
    if (!authority.empty() && authority.front() != ':') {
      return absl::InvalidArgumentError("the remote URL has text after its IPv6 host");
    }
    if (!authority.empty()) out.port = std::string(authority.substr(1));
  } else if (const std::size_t colon = authority.find(':'); colon != std::string_view::npos) {
    out.host = std::string(authority.substr(0, colon));
    out.port = std::string(authority.substr(colon + 1));
  } else {
    out.host = std::string(authority);
  }
  if (out.host.empty()) return absl::InvalidArgumentError("the remote URL has no host");
  if (out.host.front() == '-' || out.user.starts_with("-")) {
    return absl::InvalidArgumentError("the remote URL's host or user starts with '-'");
  }
  if (!out.port.empty() && (!core::IsDigits(out.port) || out.port.size() > 5)) {
    return absl::InvalidArgumentError("the remote URL's port is not a number");
  }
  return absl::OkStatus();
}

absl::StatusOr<RemoteUrl> ParseScheme(std::string_view url, const Scheme& scheme) {
  RemoteUrl out;
  out.transport = scheme.transport;
  std::string_view rest = url.substr(scheme.prefix.size());
  if (scheme.transport == Transport::kFile) {
    if (rest.empty() || rest.front() != '/') {
      return absl::InvalidArgumentError("a file:// remote URL needs an absolute path");
    }
    out.path = std::string(rest);
    return out;
  }
  const std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos || slash + 1 == rest.size()) {
    return absl::InvalidArgumentError("the remote URL has no repository path");
  }
  if (absl::Status s = ParseAuthority(rest.substr(0, slash), out); !s.ok()) return s;
  if (scheme.transport == Transport::kGit && !out.user.empty()) {
    return absl::InvalidArgumentError("a git:// remote URL cannot name a user");
  }
  std::string_view path = rest.substr(slash);
  if (scheme.transport == Transport::kSsh && path.starts_with("/~")) path.remove_prefix(1);
  out.path = std::string(path);
  return out;
}

}  // namespace

absl::StatusOr<RemoteUrl> ParseRemoteUrl(std::string_view url) {
  if (url.empty()) return absl::InvalidArgumentError("the remote URL is empty");
  if (HasControlCharacters(url)) {
    return absl::InvalidArgumentError("the remote URL contains control characters");
  }
  for (const Scheme& scheme : kSchemes) {
    if (url.size() >= scheme.prefix.size() &&
        std::equal(scheme.prefix.begin(), scheme.prefix.end(), url.begin(), [](char a, char b) {
          return a == std::tolower(static_cast<unsigned char>(b));
        })) {
      return ParseScheme(url, scheme);
    }
  }
  if (url.find("://") != std::string_view::npos) {
    return absl::InvalidArgumentError("the remote URL's scheme is not supported");
  }
  if (url.front() == '/') return RemoteUrl{Transport::kFile, "", "", "", std::string(url)};
  // scp-like: [user@]host:path, with the ':' before any '/'.
  const std::size_t bracket = url.find('[');
  const std::size_t colon =
      url.find(':', bracket == std::string_view::npos ? 0 : url.find(']', bracket));
  const std::size_t slash = url.find('/');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && slash < colon) ||
      colon + 1 == url.size()) {
    return absl::InvalidArgumentError(
        "the remote URL is neither a URL, an absolute path nor host:path");
  }
  RemoteUrl out;
  out.transport = Transport::kSsh;
  if (absl::Status s = ParseAuthority(url.substr(0, colon), out); !s.ok()) return s;
  if (!out.port.empty()) return absl::InvalidArgumentError("a host:path remote cannot name a port");
  out.path = std::string(url.substr(colon + 1));
  return out;
}

std::string UrlForDisplay(std::string_view url) {
  const std::size_t scheme_end = url.find("://");
  const std::size_t start = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  const std::size_t end = url.find('/', start);
  const std::size_t at = url.substr(0, end).rfind('@');
  if (at == std::string_view::npos || at < start) return std::string(url);
  return fmt::format("{}{}", url.substr(0, start), url.substr(at + 1));
}

}  // namespace tr::gitsource
