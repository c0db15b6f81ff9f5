#include "reconciler/runtime/git_flags.h"

#include <fstream>
#include <utility>

#include "core/text.h"
#include "fmt/format.h"
#include "reconciler/runtime/flags.h"

namespace tr::reconciler {
namespace {

using flags::Flag;
using flags::Invalid;
using flags::MillisFlag;

// Credentials that could never be used are a configuration error, found at start rather than
// at the first request the server authenticates.
absl::Status CheckGitCredentials(const gitsource::RemoteAuth& auth, const std::string& url) {
  const std::pair<const char*, const std::filesystem::path*> files[] = {
      {"git-token-file", &auth.token_file},
      {"git-password-file", &auth.password_file},
      {"git-ssh-key", &auth.ssh_key_file},
      {"git-known-hosts", &auth.known_hosts_file}};
  for (const auto& [flag, path] : files) {
    if (path->empty()) continue;
    std::ifstream in(*path);
    if (!in) return Invalid(flag, fmt::format("cannot read {}", path->string()));
  }
  const bool secret = !auth.token_file.empty() || !auth.password_file.empty();
  if (secret && url.starts_with("http://") && !auth.allow_insecure_http) {
    return Invalid(auth.token_file.empty() ? "git-password-file" : "git-token-file",
                   "refusing to send credentials over plain http:// (use https://)");
  }
  return absl::OkStatus();
}

// A budget below one profile file's limit (1 MiB) would refuse a repository of one full file.
absl::Status CheckSnapshotLimits(const gitsource::GitSourceConfig& git) {
  const std::pair<const char*, const gitsource::SnapshotLimits*> limits[] = {
      {"snapshot", &git.snapshot_limits}, {"preview", &git.preview_limits}};
  for (const auto& [prefix, limit] : limits) {
    if (limit->max_files < 1 || limit->max_files > 1'000'000) {
      return Invalid(fmt::format("{}-max-files", prefix), "1 to 1000000");
    }
    if (limit->max_total_bytes < limit->max_file_bytes) {
      return Invalid(fmt::format("{}-max-bytes", prefix),
                     fmt::format("at least {} (1 MiB)", limit->max_file_bytes));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status FinishGitFlags(const GitFlags& f) {
  const gitsource::RemoteConfig& remote = f.git.remote;
  if (absl::Status s = CheckGitCredentials(remote.auth, remote.url); !s.ok()) return s;
  const std::pair<const char*, std::filesystem::path> files[] = {
      {"git-ca-file", f.ca_file},
      {"git-allowed-signers",
       f.git.verify_signatures ? f.git.verify_signatures->allowed_signers_file : ""}};
  for (const auto& [flag, path] : files) {
    if (!path.empty() && !std::ifstream(path)) {
      return Invalid(flag, fmt::format("cannot read {}", path.string()));
    }
  }
  if (remote.limits.operation_timeout < std::chrono::seconds(1) ||
      remote.limits.operation_timeout > std::chrono::hours(1)) {
    return Invalid("git-timeout", "1s to 1h");
  }
  if (remote.limits.max_fetch_bytes < (std::uint64_t{1} << 20)) {
    return Invalid("git-max-fetch-bytes", "at least 1048576 (1 MiB)");
  }
  return CheckSnapshotLimits(f.git);
}

gitsource::Libgit2Settings Libgit2SettingsOf(const GitFlags& flags) {
  gitsource::Libgit2Settings settings;
  settings.https_ca_file = flags.ca_file;
  return settings;
}

absl::Status CheckListenAddress(std::string_view setting, const std::string& address) {
  const size_t colon = address.rfind(':');
  const std::string port = colon == std::string::npos ? "" : address.substr(colon + 1);
  if (colon == std::string::npos || colon == 0 || port.empty() || port.size() > 5 ||
      !core::IsDigits(port) || std::stoi(port) > 65535) {
    return Invalid(setting,
                   fmt::format("want host:port with a port from 0 to 65535, not \"{}\"", address));
  }
  return absl::OkStatus();
}

void AddGitFlags(CLI::App& cmd, GitFlags& f) {
  gitsource::RemoteConfig& remote = f.git.remote;
  Flag(cmd, "repo", remote.url, "Profile repository URL (https, ssh, git or file)")->required();
  Flag(cmd, "git-token-file", remote.auth.token_file, "HTTPS token file");
  Flag(cmd, "git-password-file", remote.auth.password_file, "HTTPS password file");
  Flag(cmd, "git-username", remote.auth.username, "HTTPS or SSH user name");
  Flag(cmd, "git-ssh-key", remote.auth.ssh_key_file, "SSH private key file");
  Flag(cmd, "git-known-hosts", remote.auth.known_hosts_file, "SSH known_hosts file");
  Flag(cmd, "git-ca-file", f.ca_file, "PEM bundle trusted for HTTPS instead of the system's");
  cmd.add_option_function<std::string>(
         "--git-allowed-signers",
         [&f](const std::string& path) {
           f.git.verify_signatures = gitsource::SignatureVerification{path};
         },
         "Act only on commits SSH-signed by a key in this allowed-signers file")
      ->envname(flags::EnvName("git-allowed-signers"));
  flags::Switch(cmd, "git-allow-insecure-http", remote.auth.allow_insecure_http,
                "Allow credentials over plain http:// (tests only)");
  MillisFlag(cmd, "git-timeout", remote.limits.operation_timeout,
             "Deadline of one Git network operation, the first clone included (default 60s)");
  Flag(cmd, "git-max-fetch-bytes", remote.limits.max_fetch_bytes,
       "A fetch that receives more is aborted");
  Flag(cmd, "snapshot-max-files", f.git.snapshot_limits.max_files,
       "Profile files per snapshot of the watched branch; more is refused");
  Flag(cmd, "snapshot-max-bytes", f.git.snapshot_limits.max_total_bytes,
       "Bytes of profile files per snapshot of the watched branch; more is refused");
  Flag(cmd, "preview-max-files", f.git.preview_limits.max_files,
       "Profile files per pull request head; more fails its plan status");
  Flag(cmd, "preview-max-bytes", f.git.preview_limits.max_total_bytes,
       "Bytes of profile files per pull request head; more fails its plan status");
}

}  // namespace tr::reconciler
