#include "reconciler/clients/registry/installer_tags.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <utility>

#include "base/http_client.h"
#include "base/http_outcome.h"
#include "base/percent_encoding.h"
#include "fmt/format.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "reconciler/runtime/capped_request.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler::registry {
namespace {

struct SplitUrlResult {
  std::string origin;  // scheme://host[:port]
  std::string target;  // /path?query, at least "/"
};

// http(s)://authority[/target]; nullopt for anything else.
std::optional<SplitUrlResult> SplitUrl(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::nullopt;
  const std::string_view scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") return std::nullopt;
  const size_t slash = url.find('/', scheme_end + 3);
  SplitUrlResult split{std::string(url.substr(0, slash)), "/"};
  if (slash != std::string_view::npos) split.target = std::string(url.substr(slash));
  if (split.origin.size() == scheme_end + 3) return std::nullopt;  // no host
  return split;
}

struct Answer {
  int status = 0;
  std::string body;
  std::string www_authenticate;
  std::string link;
};

enum class Auth { kNone, kBasic, kBearer };

// One GET with the options' timeout and trust.
absl::StatusOr<Answer> Get(const InstallerRegistryOptions& options, const std::string& origin,
                           const std::string& target, Auth auth, const std::string& token) {
  const auto client = NewHttpClient(origin, {options.timeout, options.timeout, options.ca_file});
  if (auth == Auth::kBasic) client->set_basic_auth(options.username, options.password);
  if (auth == Auth::kBearer) client->set_bearer_token_auth(token);
  httplib::Headers headers{{"Accept", "application/json"}};
  CappedAnswer answer =
      SendCapped(*client, MakeRequest("GET", target, headers), options.max_answer_bytes);
  const std::string url = origin + target.substr(0, target.find('?'));
  if (answer.over_cap) return AnswerOverCap("GET " + url, options.max_answer_bytes);
  httplib::Result& res = answer.result;
  if (!res) return NoAnswerError(res.error(), "GET " + url);
  return Answer{res->status, std::move(res->body), res->get_header_value("WWW-Authenticate"),
                res->get_header_value("Link")};
}

// The error an answer that is not 200 stands for.
absl::Status StatusOfAnswer(const Answer& a, std::string_view what) {
  std::string message = fmt::format("{}: HTTP {}", what, a.status);
  const HttpOutcome outcome = HttpOutcome::Of(a.status);
  // Another 2xx than 200 carries no page either.
  if (outcome.Succeeded()) return absl::InternalError(message + ", expected 200");
  return outcome.Error(std::move(message));
}

// "host" of "scheme://host[:port]" (an IPv6 literal keeps its brackets).
std::string_view HostOf(std::string_view origin) {
  origin.remove_prefix(std::min(origin.find("://") + 3, origin.size()));
  const size_t colon = origin.rfind(':');
  if (colon != std::string_view::npos && origin.find(']', colon) == std::string_view::npos) {
    origin.remove_suffix(origin.size() - colon);
  }
  return origin;
}

// Whether a token realm at `realm` may see the registry's credentials: over https, or on the
// registry's own host with the registry's scheme (a plain-http registry was allowed so).
bool MayReceiveCredentials(std::string_view realm, std::string_view registry) {
  if (realm.starts_with("https://")) return true;
  return realm.substr(0, realm.find("://")) == registry.substr(0, registry.find("://")) &&
         HostOf(realm) == HostOf(registry);
}

// Asks the challenge's realm for a token for its service and scope.
absl::StatusOr<std::string> FetchToken(const InstallerRegistryOptions& options,
                                       const Challenge& challenge) {
  std::optional<SplitUrlResult> realm = SplitUrl(challenge.realm);
  if (!realm) return absl::InternalError("the registry's token realm is not an http(s) URL");
  std::string target = realm->target;
  for (const auto& [key, value] :
       {std::pair{"service", challenge.service}, std::pair{"scope", challenge.scope}}) {
    if (value.empty()) continue;
    target += fmt::format("{}{}={}", target.find('?') == std::string::npos ? '?' : '&', key,
                          PercentEncode(value));
  }
  const Auth auth = options.username.empty() ? Auth::kNone : Auth::kBasic;
  if (auth == Auth::kBasic && !MayReceiveCredentials(realm->origin, options.origin)) {
    return absl::FailedPreconditionError(fmt::format(
        "the registry's token realm {} is neither https nor on the registry's host: the "
        "credentials of --installer-registry-credentials-file are not sent there",
        realm->origin));
  }
  absl::StatusOr<Answer> a = Get(options, realm->origin, target, auth, "");
  if (!a.ok()) return a.status();
  const absl::StatusCode code = HttpOutcome::Of(a->status).Code();
  if (code == absl::StatusCode::kUnauthenticated || code == absl::StatusCode::kPermissionDenied) {
    return StatusOfAnswer(
        *a, fmt::format("the token server {} refused {}", realm->origin,
                        auth == Auth::kBasic
                            ? "the credentials of --installer-registry-credentials-file"
                            : "an anonymous request (no --installer-registry-credentials-file)"));
  }
  if (!HttpOutcome::Of(a->status).Ok200()) {
    return StatusOfAnswer(*a, "token from " + realm->origin);
  }
  return TokenOfAnswer(a->body);
}

// The target of a `Link: <…>; rel="next"` header on `origin`; nullopt when there is none.
std::optional<std::string> NextPage(const std::string& link, const std::string& origin) {
  const size_t open = link.find('<'), close = link.find('>');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  if (link.find("rel=\"next\"", close) == std::string::npos &&
      link.find("rel=next", close) == std::string::npos) {
    return std::nullopt;
  }
  std::string target = link.substr(open + 1, close - open - 1);
  if (target.starts_with("/")) return target;
  std::optional<SplitUrlResult> absolute = SplitUrl(target);
  // Pages stay on the registry: a next link elsewhere is not followed with its credentials.
  if (!absolute || absolute->origin != origin) return std::nullopt;
  return absolute->target;
}

}  // namespace

absl::Status AppendTags(const std::string& body, size_t max_tags, std::vector<std::string>& tags) {
  const nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("tags")) {
    return absl::InternalError("the registry's answer is not a tag list");
  }
  if (json["tags"].is_null()) return absl::OkStatus();  // a repository without tags
  if (!json["tags"].is_array()) return absl::InternalError("the registry's tags are not a list");
  if (json["tags"].size() > max_tags - tags.size()) {
    return absl::ResourceExhaustedError(
        fmt::format("the registry lists more than the cap of {} tags", max_tags));
  }
  for (const nlohmann::json& tag : json["tags"]) {
    if (tag.is_string()) tags.push_back(tag.get<std::string>());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> TokenOfAnswer(const std::string& body) {
  const nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  for (const char* key : {"token", "access_token"}) {
    if (json.is_object() && json.contains(key) && json[key].is_string()) {
      return json[key].get<std::string>();
    }
  }
  return absl::InternalError("the token server's answer holds no token");
}

absl::StatusOr<InstallerRegistryOptions> ParseInstallerRegistry(
    std::string_view url, const std::filesystem::path& credentials_file,
    const std::filesystem::path& ca_file) {
  std::optional<SplitUrlResult> split = SplitUrl(url);
  if (!split) return absl::InvalidArgumentError("want http(s)://host[:port]/<repository>");
  if (split->origin.find('@') != std::string::npos) {
    return absl::InvalidArgumentError("credentials go in the credentials file, not the URL");
  }
  InstallerRegistryOptions options;
  options.origin = split->origin;
  options.repository = split->target.substr(1);
  while (options.repository.ends_with("/")) options.repository.pop_back();
  if (options.repository.empty() ||
      options.repository.find_first_of("?#:@ ") != std::string::npos) {
    return absl::InvalidArgumentError("want http(s)://host[:port]/<repository>");
  }
  options.ca_file = ca_file;
  if (credentials_file.empty()) return options;
  std::ifstream in(credentials_file);
  std::string line;
  if (!in || !std::getline(in, line)) {
    return absl::InvalidArgumentError(
        fmt::format("cannot read the credentials file {}", credentials_file.string()));
  }
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
  const size_t colon = line.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == line.size()) {
    return absl::InvalidArgumentError(fmt::format(
        "the credentials file {} must hold one line username:password", credentials_file.string()));
  }
  options.username = line.substr(0, colon);
  options.password = line.substr(colon + 1);
  return options;
}

std::optional<Challenge> ParseChallenge(std::string_view header) {
  const size_t space = header.find(' ');
  Challenge c;
  for (char ch : header.substr(0, space)) c.scheme += static_cast<char>(std::tolower(ch));
  if (c.scheme.empty()) return std::nullopt;
  std::string_view rest = space == std::string_view::npos ? "" : header.substr(space + 1);
  while (!rest.empty()) {
    rest.remove_prefix(std::min(rest.find_first_not_of(" ,"), rest.size()));
    const size_t eq = rest.find('=');
    if (eq == std::string_view::npos) break;
    std::string key;
    for (char ch : rest.substr(0, eq)) key += static_cast<char>(std::tolower(ch));
    rest.remove_prefix(eq + 1);
    std::string value;
    if (!rest.empty() && rest.front() == '"') {
      const size_t end = rest.find('"', 1);
      if (end == std::string_view::npos) return std::nullopt;
      value = std::string(rest.substr(1, end - 1));
      rest.remove_prefix(end + 1);
    } else {
      const size_t end = std::min(rest.find(','), rest.size());
      value = std::string(rest.substr(0, end));
      rest.remove_prefix(end);
    }
    if (key == "realm") c.realm = value;
    if (key == "service") c.service = value;
    if (key == "scope") c.scope = value;
  }
  return c;
}

absl::StatusOr<std::vector<std::string>> ListRegistryTags(const InstallerRegistryOptions& options,
                                                          std::stop_token stop) {
  std::string target = fmt::format("/v2/{}/tags/list?n={}", options.repository, options.page_size);
  const std::string what = fmt::format("tags of {}/{}", options.origin, options.repository);
  Auth auth = Auth::kNone;
  std::string token;
  std::vector<std::string> tags;
  for (int page = 0; page < options.max_pages; ++page) {
    if (stop.stop_requested()) return absl::CancelledError("stopped listing " + what);
    absl::StatusOr<Answer> a = Get(options, options.origin, target, auth, token);
    if (a.ok() && HttpOutcome::Of(a->status).Code() == absl::StatusCode::kUnauthenticated &&
        auth == Auth::kNone) {
      const std::optional<Challenge> challenge = ParseChallenge(a->www_authenticate);
      if (challenge && challenge->scheme == "bearer" && !challenge->realm.empty()) {
        absl::StatusOr<std::string> got = FetchToken(options, *challenge);
        if (!got.ok()) return got.status();
        auth = Auth::kBearer;
        token = *std::move(got);
      } else if (challenge && challenge->scheme == "basic" && !options.username.empty()) {
        auth = Auth::kBasic;
      } else {
        return absl::UnauthenticatedError(what + ": the registry wants credentials");
      }
      a = Get(options, options.origin, target, auth, token);
    }
    if (!a.ok()) return a.status();
    if (!HttpOutcome::Of(a->status).Ok200()) return StatusOfAnswer(*a, what);
    if (absl::Status s = AppendTags(a->body, options.max_tags, tags); !s.ok()) {
      return absl::Status(s.code(), fmt::format("{}: {}", what, std::string(s.message())));
    }
    std::optional<std::string> next = NextPage(a->link, options.origin);
    if (!next) return tags;
    target = *std::move(next);
  }
  ModuleLogger("registry")->warn("step=list-tags pages={} outcome=truncated", options.max_pages);
  return tags;
}

std::vector<core::Version> ReleaseTags(const std::vector<std::string>& tags) {
  std::vector<core::Version> releases;
  for (const std::string& tag : tags) {
    if (!tag.starts_with("v")) continue;
    absl::StatusOr<core::Version> v = core::ParseTalosVersion(tag);
    if (!v.ok() || !v->IsRelease() || v->Tag() != tag) continue;  // "v1.12" or "v01.2.3"
    releases.push_back(*std::move(v));
  }
  std::sort(releases.begin(), releases.end());
  releases.erase(std::unique(releases.begin(), releases.end()), releases.end());
  return releases;
}

absl::StatusOr<releases::ReleaseList> TagListSource::List(std::stop_token stop) {
  absl::StatusOr<std::vector<std::string>> tags = lister_(stop);
  if (!tags.ok()) return tags.status();
  return releases::ReleaseList{.releases = ReleaseTags(*tags), .broken = {}, .listed = tags->size()};
}

}  // namespace tr::reconciler::registry
