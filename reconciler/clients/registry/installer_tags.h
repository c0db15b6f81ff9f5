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
// InstallerReleases keeps the last list that was read: Refresh() replaces it on success and
// keeps it (logging the error) on failure; Run() refreshes every `ttl` until stopped. Readers
// never wait for the network. With a second lister (the Image Factory's broken releases) it
// also keeps the releases marked broken, read in the same refresh: a release that the first
// list has is not broken (a factory that ignores `?broken=true` answers its release list).
//
// Thread-safety: ListRegistryTags is reentrant. InstallerReleases: Known() from any thread;
// Refresh() and Run() from one thread.
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

class InstallerReleases {
 public:
  using Lister = std::function<absl::StatusOr<std::vector<std::string>>(std::stop_token)>;
  // `broken`, when set, lists the tags of the releases marked broken.
  InstallerReleases(Lister lister, std::chrono::milliseconds ttl, Env& env, Lister broken = {});

  // Lists the tags (and the broken ones) once; when every listing succeeds the releases among
  // them replace the known ones.
  absl::Status Refresh(std::stop_token stop);
  // Refresh, then wait `ttl` (on the Env), until `stop`.
  void Run(std::stop_token stop);
  // The releases of the last successful listing; empty before the first.
  std::vector<core::Version> Known() const;
  // The releases marked broken at the last successful refresh; empty before the first.
  std::vector<core::Version> Broken() const;

 private:
  Lister lister_;
  Lister broken_lister_;
  const std::chrono::milliseconds ttl_;
  Env& env_;
  mutable Mutex mu_;
  std::vector<core::Version> known_ ABSL_GUARDED_BY(mu_);
  std::vector<core::Version> broken_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler::registry
