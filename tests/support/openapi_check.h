// Checks an HTTP request against GitHub's official REST description (`@octokit/openapi`'s
// generated/api.github.com.json, which tests/forge/setup keeps in .cache/forge-npm): the
// method and path must be an operation of the description, path and query parameters must
// be declared and of the declared type, the JSON body must carry the required fields and only
// declared ones (types and enums checked), and the headers must be what GitHub asks of every
// client (Accept, X-GitHub-Api-Version, a token, the body's content type).
//
// Thread-safe after construction (read-only).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace tr::forge_test {

struct HttpRequestView {
  std::string method;                          // "POST"
  std::string path;                            // below the API base URL, no query
  std::map<std::string, std::string> query;    // decoded
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

class GithubOpenApi {
 public:
  // The description installed by tests/forge/setup, loaded once; fails the test when missing.
  static const GithubOpenApi& Installed();
  explicit GithubOpenApi(nlohmann::json spec) : spec_(std::move(spec)) {}

  // Every way `request` departs from the description; empty when it conforms.
  std::vector<std::string> Check(const HttpRequestView& request) const;
  // The operation's path template ("/repos/{owner}/{repo}/statuses/{sha}"), "" when none.
  std::string MatchPath(const std::string& method, const std::string& path) const;

 private:
  const nlohmann::json& Resolve(const nlohmann::json& node) const;
  void CheckParameters(const nlohmann::json& operation, const nlohmann::json& path_item,
                       const std::string& templ, const HttpRequestView& request,
                       std::vector<std::string>& problems) const;
  void CheckBody(const nlohmann::json& operation, const HttpRequestView& request,
                 std::vector<std::string>& problems) const;
  // The body's fields against one object schema: required, declared, typed, in the enum.
  void CheckFields(const nlohmann::json& schema, const nlohmann::json& body,
                   std::vector<std::string>& problems) const;

  nlohmann::json spec_;
};

}  // namespace tr::forge_test
