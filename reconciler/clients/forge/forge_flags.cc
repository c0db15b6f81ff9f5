#include "reconciler/clients/forge/forge_flags.h"

#include "base/secret_file.h"
#include "reconciler/clients/forge/forge_dialect.h"
#include "reconciler/runtime/flags.h"

namespace tr::reconciler::forge {
namespace {

using flags::Flag;
using flags::Invalid;

// "owner/name" from a repository URL's path: https://host/owner/name.git, git@host:owner/name.
std::string RepositoryPath(const std::string& url) {
  size_t start = url.find("://");
  start = start == std::string::npos ? url.find(':') : url.find('/', start + 3);
  if (start == std::string::npos) return "";
  std::string path = url.substr(start + 1);
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (path.ends_with(".git")) path.resize(path.size() - 4);
  return path;
}

// "default https://api.github.com for github; required for the others", from the dialects.
std::string DefaultApiUrls() {
  std::string text;
  for (const ForgeDialect* dialect : AllDialects()) {
    const ForgeApiDialect* api = dialect->api();
    if (api == nullptr || !api->DefaultApiUrl()) continue;
    text += (text.empty() ? "default " : "; ") + *api->DefaultApiUrl() + " for " +
            std::string(dialect->name());
  }
  return text + (text.empty() ? "required" : "; required for the others");
}

}  // namespace

void ForgeFlags::AddFlags(CLI::App& cmd) {
  Flag(cmd, "forge", kind,
       DialectNames("|", /*api_only=*/true) +
           ": plan pull requests and report rollouts there (default: none)");
  Flag(cmd, "forge-api-url", api_url, "The forge's API base URL (" + DefaultApiUrls() + ")");
  Flag(cmd, "forge-token-file", token_file, "File holding the forge API token");
  flags::Switch(cmd, "forge-allow-insecure-http", allow_insecure_http,
                "Allow an http:// --forge-api-url, the token in clear (tests only)");
  Flag(cmd, "forge-repository", repository,
       "owner/name (GitLab: group/project) on the forge (default: the path of --repo)");
  flags::MillisFlag(cmd, "forge-comment-interval", comment_interval,
                    "At most one edit of a pull request's comment per this (default 10s)");
}

absl::Status ForgeFlags::Finish(const std::string& repo_url) {
  if (kind.empty()) return absl::OkStatus();
  const ForgeApiDialect* dialect = FindApiDialect(kind);
  if (dialect == nullptr) return Invalid("forge", "want " + DialectNames("|", /*api_only=*/true));
  if (api_url.empty()) api_url = dialect->DefaultApiUrl().value_or("");
  if (api_url.empty()) return Invalid("forge-api-url", "required for " + kind);
  if (!api_url.starts_with("http://") && !api_url.starts_with("https://")) {
    return Invalid("forge-api-url", "must start with http:// or https://");
  }
  if (api_url.starts_with("http://") && !allow_insecure_http) {
    return Invalid("forge-api-url",
                   "refusing to send the forge token over plain http:// (use https://, or "
                   "--forge-allow-insecure-http for a test forge)");
  }
  if (token_file.empty()) return Invalid("forge-token-file", "required with --forge");
  auto token = ReadSecretFile(token_file);
  if (!token.ok()) return Invalid("forge-token-file", std::string(token.status().message()));
  if (repository.empty()) repository = RepositoryPath(repo_url);
  if (repository.find('/') == std::string::npos) {
    return Invalid("forge-repository", "want owner/name (cannot tell it from --repo)");
  }
  if (comment_interval < std::chrono::milliseconds(0)) {
    return Invalid("forge-comment-interval", "must not be negative");
  }
  return absl::OkStatus();
}

}  // namespace tr::reconciler::forge
