// The Talos releases an installer repository holds, read from its OCI registry through the
// distribution API (`GET /v2/<name>/tags/list`), so that the release catalog — the planner's
// intermediate hops and the `available` version in status — follows real releases, not only
// the snapshot built in and reconciler.yaml's `releases`.
//
// ListRegistryTags does one listing:
//  - pages: it asks for `page_size` tags at a time and follows `Link: <…>; rel="next"` for at
//    most `max_pages` pages;
//  - auth: a 401 with `WWW-Authenticate: Bearer realm="…",service="…",scope="…"` makes it GET
//    the realm (with the credentials as Basic auth when given) for a token and retry with
//    `Authorization: Bearer`; a 401 with a `Basic` challenge is retried with the credentials.
//    The credentials go only to a realm on the registry's own host and scheme or to an https
//    realm: a challenge naming any other realm fails (FailedPrecondition) with nothing sent;
//  - limits: an answer longer than `max_answer_bytes`, or more than `max_tags` tags in all,
//    fails (ResourceExhausted, naming the limit) without being read further;
//  - every request has `timeout` (connect, read, write); the stop token is checked between
//    requests.
// Neither the password nor a token is ever logged or put into an error message.
//
// TagListSource is the release source (reconciler/clients/releases/release_source.h) of a tag
// listing: the releases among the tags; the daemon keeps its answer in the one release cache,
// releases::ReleaseCache (release_cache.h).
//
// Thread-safety: ListRegistryTags is reentrant; a TagListSource is thread-compatible.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "base/mutex.h"
#include "core/version.h"
#include "reconciler/clients/releases/release_source.h"

namespace tr::reconciler::registry {

struct InstallerRegistryOptions {
  // http(s)://host[:port]/<repository name>, e.g. https://registry.example.com/siderolabs/installer
  std::string origin;      // "https://registry.example.com"
  std::string repository;  // "siderolabs/installer"
  std::string username;    // optional, with password
  std::string password;
  std::filesystem::path ca_file;  // PEM bundle trusted instead of the system's; empty: system
  std::chrono::milliseconds timeout{10'000};
  std::chrono::milliseconds ttl{std::chrono::hours(1)};
  int page_size = 1000;
  int max_pages = 20;
  size_t max_answer_bytes = size_t{4} << 20;  // one page or token answer
  size_t max_tags = 100'000;                  // over every page; Talos has a few hundred
};

// Options from the --installer-registry flags: the repository URL, an optional credentials
// file holding one line `username:password`, an optional CA file. InvalidArgument naming the
// problem (never the password): not http(s), no repository path, a userinfo in the URL, an
// unreadable or malformed credentials file.
absl::StatusOr<InstallerRegistryOptions> ParseInstallerRegistry(
    std::string_view url, const std::filesystem::path& credentials_file,
    const std::filesystem::path& ca_file);

// Every tag of the repository, in the registry's order. Errors: Unavailable (cannot connect,
// 5xx, 429), DeadlineExceeded (a request timed out), Unauthenticated (401 after auth, or no
// credentials for a Basic challenge), PermissionDenied (403), NotFound (404: no such
// repository), Internal (an answer that is not the API's), Cancelled (stopped),
// FailedPrecondition (credentials asked for by a foreign plain-http realm), ResourceExhausted
// (an answer or the tag count over its limit).
absl::StatusOr<std::vector<std::string>> ListRegistryTags(const InstallerRegistryOptions& options,
                                                          std::stop_token stop);

// The Talos releases among `tags`: exact `vX.Y.Z` tags; prereleases, development builds and
// other tags (`latest`, digests) are left out. Sorted, oldest first.
std::vector<core::Version> ReleaseTags(const std::vector<std::string>& tags);

// One WWW-Authenticate challenge: `Bearer realm="…",service="…",scope="…"` or `Basic realm="…"`.
// nullopt when it does not parse.
struct Challenge {
  std::string scheme;  // "bearer", "basic" (lower case)
  std::string realm, service, scope;
};
std::optional<Challenge> ParseChallenge(std::string_view header);

// One page of a tag listing (`{"name": …, "tags": [...]}`): its tags appended to `tags`.
// Internal when the body is not a tag list, ResourceExhausted when the tags would be more than
// `max_tags` (nothing appended then).
absl::Status AppendTags(const std::string& body, size_t max_tags, std::vector<std::string>& tags);
// The bearer token of a token server's answer (`token`, else `access_token`); Internal when
// there is none.
absl::StatusOr<std::string> TokenOfAnswer(const std::string& body);

// The releases among the tags a lister gives (ReleaseTags).
class TagListSource final : public releases::ReleaseSource {
 public:
  using Lister = std::function<absl::StatusOr<std::vector<std::string>>(std::stop_token)>;
  explicit TagListSource(Lister lister) : lister_(std::move(lister)) {}
  absl::StatusOr<releases::ReleaseList> List(std::stop_token stop) override;

 private:
  Lister lister_;
};

}  // namespace tr::reconciler::registry
