// Parsing and checking of remote URLs. The accepted forms:
//
//   https://host[:port]/path      http://host[:port]/path (credentials only if allowed)
//   ssh://[user@]host[:port]/path  git+ssh://…  ssh+git://…  [user@]host:path (scp-like)
//   git://host[:port]/path         file:///path  /absolute/path
//
// A password in a URL is refused: secrets come from files, and a URL ends up in messages.
//
// Pure; thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tr::gitsource {

enum class Transport { kHttps, kHttp, kSsh, kGit, kFile };

struct RemoteUrl {
  Transport transport = Transport::kFile;
  std::string user;  // from the URL; empty when none
  std::string host;  // without brackets for IPv6
  std::string port;  // empty: the transport's default
  std::string path;  // for ssh, as passed to git-upload-pack ("/srv/x.git", "~/x.git", "x.git")
};

// Returns InvalidArgument (without echoing any secret) for anything else.
absl::StatusOr<RemoteUrl> ParseRemoteUrl(std::string_view url);

// `url` with any userinfo removed, for messages.
std::string UrlForDisplay(std::string_view url);

}  // namespace tr::gitsource
