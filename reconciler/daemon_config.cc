#include "reconciler/daemon_config.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <system_error>
#include <tuple>

#include "core/duration.h"
#include "core/names.h"
#include "core/text.h"
#include "fmt/format.h"
#include "reconciler/forge/secret_file.h"
#include "reconciler/notify/notify_target.h"
#include "reconciler/private_files.h"

namespace tr::reconciler {
namespace {

constexpr const char* kEnvPrefix = "TALOS_RECONCILER_";

std::string EnvName(std::string flag) {
  std::string env = kEnvPrefix;
  for (char c : flag) env += c == '-' ? '_' : static_cast<char>(std::toupper(c));
  return env;
}

template <typename T>
CLI::Option* Flag(CLI::App& cmd, const std::string& name, T& value, const std::string& help) {
  return cmd.add_option("--" + name, value, help)->envname(EnvName(name))->capture_default_str();
}

// A duration flag ("30s", "5m") parsed with the profile syntax.
CLI::Option* DurationFlag(CLI::App& cmd, const std::string& name, std::chrono::seconds& value,
                          const std::string& help) {
  return cmd
      .add_option_function<std::string>(
          "--" + name,
          [&value, name](const std::string& text) {
            absl::StatusOr<std::chrono::seconds> d = core::ParseDuration(text);
            if (!d.ok()) throw CLI::ValidationError("--" + name, std::string(d.status().message()));
            value = *d;
          },
          help + " (default " + core::FormatDuration(value) + ")")
      ->envname(EnvName(name));
}

// "200ms", or any duration ParseDuration reads ("5s", "1m").
absl::StatusOr<std::chrono::milliseconds> ParseMillis(const std::string& text) {
  if (text.size() > 2 && text.ends_with("ms")) {
    const std::string digits = text.substr(0, text.size() - 2);
    if (digits.size() <= 9 && core::IsDigits(digits)) {
      return std::chrono::milliseconds(std::stoll(digits));
    }
    return absl::InvalidArgumentError("invalid duration \"" + text + "\"");
  }
  absl::StatusOr<std::chrono::seconds> s = core::ParseDuration(text);
  if (!s.ok()) return s.status();
  return std::chrono::milliseconds(*s);
}

// A duration flag that also takes milliseconds ("200ms").
void MillisFlag(CLI::App& cmd, const std::string& name, std::chrono::milliseconds& value,
                const std::string& help) {
  cmd.add_option_function<std::string>(
         "--" + name,
         [&value, name](const std::string& text) {
           absl::StatusOr<std::chrono::milliseconds> d = ParseMillis(text);
           if (!d.ok()) throw CLI::ValidationError("--" + name, std::string(d.status().message()));
           value = *d;
         },
         help)
      ->envname(EnvName(name));
}

absl::Status Invalid(std::string_view setting, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format("--{}: {}", setting, why));
}

void AddForgeFlags(CLI::App& cmd, DaemonConfig& c) {
  Flag(cmd, "webhook-listen", c.webhook_listen,
       "host:port for POST /hooks/github|gitlab|gitea (default: no webhook listener)");
  Flag(cmd, "webhook-secret-file", c.webhook_secret_file,
       "File holding the webhook secret (HMAC key; GitLab's token)");
  Flag(cmd, "webhook-queue", c.webhook_queue, "Verified deliveries waiting before 503");
  Flag(cmd, "notify", c.notify,
       "Notification receiver: url=URL,format=json|slack[,secret-file=FILE] (repeatable)");
  Flag(cmd, "forge", c.forge,
       "github|gitlab|gitea: plan pull requests and report rollouts there (default: none)");
  Flag(cmd, "forge-api-url", c.forge_api_url,
       "The forge's API base URL (default https://api.github.com; required for gitlab/gitea)");
  Flag(cmd, "forge-token-file", c.forge_token_file, "File holding the forge API token");
  cmd.add_flag("--forge-allow-insecure-http", c.forge_allow_insecure_http,
               "Allow an http:// --forge-api-url, the token in clear (tests only)")
      ->envname(EnvName("forge-allow-insecure-http"));
  Flag(cmd, "forge-repository", c.forge_repository,
       "owner/name (GitLab: group/project) on the forge (default: the path of --repo)");
  MillisFlag(cmd, "forge-comment-interval", c.forge_comment_interval,
             "At most one edit of a pull request's comment per this (default 10s)");
}

void AddInstallerRegistryFlags(CLI::App& cmd, DaemonConfig& c) {
  Flag(cmd, "installer-registry", c.installer_registry_url,
       "http(s)://host[:port]/<name> of the installer repository whose release tags are "
       "listed (OCI distribution API) into the release catalog (default: none)");
  Flag(cmd, "installer-registry-credentials-file", c.installer_registry_credentials_file,
       "File holding one line username:password for the registry");
  Flag(cmd, "installer-registry-ca-file", c.installer_registry_ca_file,
       "PEM bundle trusted for the registry instead of the system's");
  cmd.add_flag("--installer-registry-allow-insecure-http", c.installer_registry_allow_insecure_http,
               "Allow credentials to an http:// --installer-registry (tests only)")
      ->envname(EnvName("installer-registry-allow-insecure-http"));
  MillisFlag(cmd, "installer-registry-timeout", c.installer_registry_timeout,
             "Deadline of one registry request (default 10s)");
  DurationFlag(cmd, "installer-registry-ttl", c.installer_registry_ttl,
               "How often the tags are listed again");
}

absl::Status FinishInstallerRegistryConfig(DaemonConfig& c) {
  if (c.installer_registry_url.empty()) return absl::OkStatus();
  auto options = registry::ParseInstallerRegistry(c.installer_registry_url,
                                                  c.installer_registry_credentials_file,
                                                  c.installer_registry_ca_file);
  if (!options.ok()) return Invalid("installer-registry", std::string(options.status().message()));
  if (!options->username.empty() && options->origin.starts_with("http://") &&
      !c.installer_registry_allow_insecure_http) {
    return Invalid("installer-registry-credentials-file",
                   "refusing to send credentials over plain http:// (use https://, or "
                   "--installer-registry-allow-insecure-http)");
  }
  using std::chrono::milliseconds, std::chrono::minutes, std::chrono::hours;
  if (c.installer_registry_timeout < milliseconds(100) ||
      c.installer_registry_timeout > minutes(5)) {
    return Invalid("installer-registry-timeout", "100ms to 5m");
  }
  if (c.installer_registry_ttl < minutes(1) || c.installer_registry_ttl > hours(24 * 7)) {
    return Invalid("installer-registry-ttl", "1m to 168h");
  }
  options->timeout = c.installer_registry_timeout;
  options->ttl = c.installer_registry_ttl;
  c.installer_registry = *std::move(options);
  return absl::OkStatus();
}

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

// --forge needs a token, an API URL (GitHub's has a default) and a repository path.
absl::Status FinishForgeApiConfig(DaemonConfig& c) {
  if (c.forge.empty()) return absl::OkStatus();
  if (c.forge != "github" && c.forge != "gitlab" && c.forge != "gitea") {
    return Invalid("forge", "want github, gitlab or gitea");
  }
  if (c.forge_api_url.empty() && c.forge == "github") c.forge_api_url = "https://api.github.com";
  if (c.forge_api_url.empty()) return Invalid("forge-api-url", "required for " + c.forge);
  if (!c.forge_api_url.starts_with("http://") && !c.forge_api_url.starts_with("https://")) {
    return Invalid("forge-api-url", "must start with http:// or https://");
  }
  if (c.forge_api_url.starts_with("http://") && !c.forge_allow_insecure_http) {
    return Invalid("forge-api-url",
                   "refusing to send the forge token over plain http:// (use https://, or "
                   "--forge-allow-insecure-http for a test forge)");
  }
  if (c.forge_token_file.empty()) return Invalid("forge-token-file", "required with --forge");
  auto token = forge::ReadSecretFile(c.forge_token_file);
  if (!token.ok()) return Invalid("forge-token-file", std::string(token.status().message()));
  if (c.forge_repository.empty()) c.forge_repository = RepositoryPath(c.git.remote.url);
  if (c.forge_repository.find('/') == std::string::npos) {
    return Invalid("forge-repository", "want owner/name (cannot tell it from --repo)");
  }
  if (c.forge_comment_interval < std::chrono::milliseconds(0)) {
    return Invalid("forge-comment-interval", "must not be negative");
  }
  return absl::OkStatus();
}

// The webhook and notification settings: a listener needs a readable secret; every --notify
// entry must parse (its secret file is read).
absl::Status FinishForgeConfig(DaemonConfig& c) {
  if (!c.webhook_listen.empty()) {
    if (absl::Status s = CheckListenAddress("webhook-listen", c.webhook_listen); !s.ok()) {
      return s;
    }
    if (c.webhook_secret_file.empty()) return Invalid("webhook-secret-file", "required");
    auto secret = forge::ReadSecretFile(c.webhook_secret_file, forge::kMinWebhookSecretBytes);
    if (!secret.ok()) return Invalid("webhook-secret-file", std::string(secret.status().message()));
  }
  if (c.webhook_queue < 1 || c.webhook_queue > 100000)
    return Invalid("webhook-queue", "1 to 100000");
  for (const std::string& entry : c.notify) {
    if (auto target = notify::ParseNotifyTarget(entry); !target.ok()) return target.status();
  }
  return FinishForgeApiConfig(c);
}

// " (did you mean \"poll-interval\"?)" for a mistyped flag of `cmd`; empty when none is close.
std::string Suggestion(const CLI::App& cmd, const std::string& key) {
  std::vector<std::string> names;
  for (const CLI::Option* option : cmd.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back(name);
  }
  const std::string best =
      core::ClosestSpelling(key, std::vector<std::string_view>(names.begin(), names.end()));
  return best.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", best);
}

}  // namespace

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
      ->envname(EnvName("git-allowed-signers"));
  cmd.add_flag("--git-allow-insecure-http", remote.auth.allow_insecure_http,
               "Allow credentials over plain http:// (tests only)")
      ->envname(EnvName("git-allow-insecure-http"));
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

void AddLeaderElectionFlags(CLI::App& cmd, DaemonConfig& c) {
  cmd.add_flag("--leader-elect", c.leader_elect,
               "Act only while holding a Kubernetes Lease (more than one replica)")
      ->envname(EnvName("leader-elect"));
  Flag(cmd, "kubeconfig", c.kubeconfig,
       "The Kubernetes API of the Leases and upgrade Jobs (default: the in-cluster service "
       "account)");
  Flag(cmd, "leader-elect-namespace", c.leader_elect_namespace,
       "Namespace of the Leases (default: the service account's; \"default\" with --kubeconfig)");
  Flag(cmd, "leader-elect-name", c.leader_elect_name,
       "Name of the Lease (<name>-shard-<i> with --shards)");
  Flag(cmd, "leader-elect-identity", c.leader_elect_identity,
       "This replica's holder identity (default: $POD_NAME, else the host name)");
  MillisFlag(cmd, "leader-elect-lease-duration", c.leader_elect_lease_duration,
             "How long a Lease not renewed stays held (default 15s)");
  MillisFlag(cmd, "leader-elect-renew-deadline", c.leader_elect_renew_deadline,
             "How long the holder acts after its last renewal (default 10s)");
  MillisFlag(cmd, "leader-elect-retry-period", c.leader_elect_retry_period,
             "Time between two tries to take or renew a Lease (default 2s)");
  Flag(cmd, "shards", c.shards,
       "Split the clusters into this many shards, one Lease each (needs --leader-elect)");
}

void AddKubernetesUpgradeJobFlags(CLI::App& cmd, DaemonConfig& c) {
  Flag(cmd, "kubernetes-upgrade-job-image", c.kubernetes_upgrade_job_image,
       "The talos-reconciler image the upgrade Jobs run (needed for --kubernetes-upgrade-mode "
       "job)");
  Flag(cmd, "kubernetes-upgrade-job-namespace", c.kubernetes_upgrade_job_namespace,
       "Namespace of the upgrade Jobs (default: the service account's; \"default\" with "
       "--kubeconfig)");
  Flag(cmd, "kubernetes-upgrade-job-secret", c.kubernetes_upgrade_job_secrets,
       "CREDENTIALS=SECRET: the Secret (key talosconfig) a Job mounts for profiles with "
       "spec.credentials CREDENTIALS; repeatable")
      ->delimiter(',');
  DurationFlag(cmd, "kubernetes-upgrade-job-deadline", c.kubernetes_upgrade_job_deadline,
               "activeDeadlineSeconds of an upgrade Job");
}

absl::Status FinishKubernetesUpgradeJob(const DaemonConfig& c) {
  if (c.kubernetes_upgrade_mode != "job") return absl::OkStatus();
  if (c.kubernetes_upgrade_job_image.empty()) {
    return Invalid("kubernetes-upgrade-job-image", "required with --kubernetes-upgrade-mode job");
  }
  // A Job mounts one talosconfig per credentials name, the --credentials-dir layout.
  if (!c.talosconfig.empty()) {
    return Invalid("talosconfig",
                   "--kubernetes-upgrade-mode job needs --credentials-dir (a Job mounts one "
                   "talosconfig Secret per credentials name)");
  }
  for (const std::string& entry : c.kubernetes_upgrade_job_secrets) {
    const size_t eq = entry.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == entry.size()) {
      return Invalid("kubernetes-upgrade-job-secret",
                     fmt::format("\"{}\" is not CREDENTIALS=SECRET", entry));
    }
  }
  if (c.kubernetes_upgrade_job_deadline < std::chrono::minutes(1) ||
      c.kubernetes_upgrade_job_deadline > std::chrono::hours(24 * 7)) {
    return Invalid("kubernetes-upgrade-job-deadline", "1m to 168h");
  }
  return absl::OkStatus();
}

// Ranges of the leader election settings; the identity defaults to the pod or host name.
absl::Status FinishLeaderElection(DaemonConfig& c) {
  if (c.shards < 1 || c.shards > 1024) return Invalid("shards", "1 to 1024");
  if (!c.leader_elect) {
    if (c.shards > 1) return Invalid("shards", "needs --leader-elect");
    return absl::OkStatus();
  }
  if (!core::CheckDns1123Subdomain(c.leader_elect_name).ok() || c.leader_elect_name.size() > 200) {
    return Invalid("leader-elect-name", "a DNS subdomain name of at most 200 characters");
  }
  using std::chrono::milliseconds, std::chrono::minutes;
  if (c.leader_elect_lease_duration < std::chrono::seconds(1) ||
      c.leader_elect_lease_duration > minutes(10)) {
    return Invalid("leader-elect-lease-duration", "1s to 10m");
  }
  if (c.leader_elect_retry_period < milliseconds(10) ||
      c.leader_elect_renew_deadline <= c.leader_elect_retry_period ||
      c.leader_elect_lease_duration <= c.leader_elect_renew_deadline) {
    return Invalid("leader-elect-renew-deadline",
                   "want lease duration > renew deadline > retry period >= 10ms");
  }
  if (c.leader_elect_identity.empty()) {
    if (const char* pod = std::getenv("POD_NAME"); pod != nullptr) c.leader_elect_identity = pod;
  }
  if (c.leader_elect_identity.empty()) {
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) == 0) c.leader_elect_identity = host;
  }
  if (c.leader_elect_identity.empty()) {
    return Invalid("leader-elect-identity", "give it (no POD_NAME and no host name)");
  }
  return absl::OkStatus();
}

void AddDaemonFlags(CLI::App& cmd, DaemonConfig& c) {
  cmd.add_option("--config", c.config_file,
                 "A file of `flag = value` lines (the flags' long names, without --)");
  AddGitFlags(cmd, c);
  Flag(cmd, "branch", c.git.branch, "The desired-state branch (never written)");
  Flag(cmd, "status-branch", c.status_branch, "The branch status is written to");
  Flag(cmd, "status-author-name", c.status_author_name, "Author of status commits");
  Flag(cmd, "status-author-email", c.status_author_email, "Author e-mail of status commits");
  DurationFlag(cmd, "poll-interval", c.poll_interval, "How often the repository is polled");
  Flag(cmd, "poll-jitter", c.poll_jitter, "Random spread of the poll interval, 0 to 0.5");
  DurationFlag(cmd, "resync", c.resync, "How often every cluster is reconciled anyway");
  DurationFlag(cmd, "drain-timeout", c.drain_timeout, "How long a drain may take");
  DurationFlag(cmd, "unhealthy-after", c.unhealthy_after,
               "/healthz fails after this long without a successful poll or reconcile");
  DurationFlag(cmd, "shutdown-timeout", c.shutdown_timeout,
               "How long SIGTERM may take before the process exits anyway");
  MillisFlag(cmd, "node-poll-interval", c.node_poll_interval,
             "How often a node being upgraded is looked at: 5s, 200ms (default 5s)");
  MillisFlag(cmd, "status-commit-window", c.status_commit_window,
             "Least time between two status commits; updates in between share one: 250ms, 1s, "
             "0ms (default 250ms)");
  Flag(cmd, "credentials-dir", c.credentials_dir,
       "Directory of credentials: <dir>/<credentials>/talosconfig per profile");
  Flag(cmd, "talosconfig", c.talosconfig,
       "Instead of --credentials-dir: one talosconfig, the context named by each profile's "
       "spec.credentials (default: $TALOSCONFIG)");
  Flag(cmd, "state-dir", c.state_dir, "Directory for the Git mirror and local state")->required();
  Flag(cmd, "listen", c.listen, "host:port for /healthz, /readyz and /metrics");
  Flag(cmd, "node-name", c.node_name, "The node this process runs on (upgraded last)");
  Flag(cmd, "etcd-snapshots-keep", c.etcd_snapshots_keep,
       "etcd snapshots kept per cluster under <state-dir>/etcd-snapshots; older are deleted");
  cmd.add_flag("--dry-run", c.dry_run, "Plan and report; never upgrade")
      ->envname(EnvName("dry-run"));
  Flag(cmd, "workers", c.workers, "Clusters reconciled at once");
  Flag(cmd, "kubernetes-upgrade-mode", c.kubernetes_upgrade_mode,
       "inprocess: run Kubernetes upgrades as daemon tasks; job: as Kubernetes Jobs; off: "
       "report them Blocked")
      ->check(CLI::IsMember({"inprocess", "job", "off"}));
  AddKubernetesUpgradeJobFlags(cmd, c);
  Flag(cmd, "log-level", c.log_level, "trace, debug, info, warn or error");
  Flag(cmd, "log-format", c.log_format, "text (key=value lines) or json (one object a line)")
      ->check(CLI::IsMember({"text", "json"}));
  AddForgeFlags(cmd, c);
  AddLeaderElectionFlags(cmd, c);
  AddInstallerRegistryFlags(cmd, c);
}

void SettingOrigins::SetFromFile(const std::string& flag, std::string file_line) {
  from_file_[flag] = std::move(file_line);
}

std::string SettingOrigins::Of(const std::string& flag,
                               const std::vector<std::string>& args) const {
  for (const std::string& arg : args) {
    if (arg == "--" + flag || arg.starts_with("--" + flag + "=")) return "the command line";
  }
  if (auto it = from_file_.find(flag); it != from_file_.end()) return it->second;
  if (std::getenv(EnvName(flag).c_str()) != nullptr) return EnvName(flag);
  return "";
}

std::string SettingOrigins::Annotate(const std::string& message,
                                     const std::vector<std::string>& args) const {
  if (!message.starts_with("--")) return message;
  const size_t end = message.find_first_of(": ", 2);
  const std::string flag = message.substr(2, end == std::string::npos ? end : end - 2);
  const std::string origin = Of(flag, args);
  if (origin.empty()) return message;
  return fmt::format("--{} (set by {}){}", flag, origin,
                     end == std::string::npos ? "" : message.substr(end));
}

absl::Status ApplyConfigFile(const std::vector<std::string>& args, const CLI::App& cmd,
                             SettingOrigins* origins) {
  std::string path;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--config" && i + 1 < args.size()) path = args[i + 1];
    if (args[i].rfind("--config=", 0) == 0) path = args[i].substr(9);
  }
  if (path.empty()) return absl::OkStatus();
  std::ifstream in(path);
  if (!in) return absl::InvalidArgumentError(fmt::format("--config: cannot read {}", path));
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    const size_t eq = line.find('=');
    auto trim = [](std::string t) {
      t.erase(0, t.find_first_not_of(" \t"));
      t.erase(t.find_last_not_of(" \t\r") + 1);
      return t;
    };
    const std::string key = eq == std::string::npos ? "" : trim(line.substr(0, eq));
    if (key.empty() || key == "config") {
      return absl::InvalidArgumentError(fmt::format(
          "--config: {}:{}: want `flag = value` with a flag of this command", path, number));
    }
    if (cmd.get_option_no_throw("--" + key) == nullptr) {
      return absl::InvalidArgumentError(fmt::format("--config: {}:{}: unknown setting \"{}\"{}",
                                                    path, number, key, Suggestion(cmd, key)));
    }
    if (origins != nullptr) origins->SetFromFile(key, fmt::format("{}:{}", path, number));
    std::string value = trim(line.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    ::setenv(EnvName(key).c_str(), value.c_str(), /*overwrite=*/0);
  }
  return absl::OkStatus();
}

// Exactly one of --credentials-dir and --talosconfig ($TALOSCONFIG, as talosctl reads it, when
// neither is given), and it exists.
absl::Status FinishTalosCredentials(DaemonConfig& c) {
  if (c.credentials_dir.empty() && c.talosconfig.empty()) {
    if (const char* env = std::getenv("TALOSCONFIG"); env != nullptr) c.talosconfig = env;
  }
  if (c.credentials_dir.empty() == c.talosconfig.empty()) {
    return Invalid("credentials-dir", "give it or --talosconfig (one of the two)");
  }
  std::error_code ec;
  if (!c.talosconfig.empty() && !std::filesystem::is_regular_file(c.talosconfig, ec)) {
    return Invalid("talosconfig", c.talosconfig.string() + " is not a readable file");
  }
  if (!c.credentials_dir.empty() && !std::filesystem::is_directory(c.credentials_dir, ec)) {
    return Invalid("credentials-dir", c.credentials_dir.string() + " is not a directory");
  }
  return absl::OkStatus();
}

absl::Status FinishDaemonConfig(DaemonConfig& c) {
  if (absl::Status s = FinishTalosCredentials(c); !s.ok()) return s;
  if (absl::Status s = MakeStateDirectory(c.state_dir); !s.ok()) {
    return Invalid("state-dir", std::string(s.message()));
  }
  c.git.state_dir = c.state_dir;
  using std::chrono::hours, std::chrono::milliseconds, std::chrono::minutes, std::chrono::seconds;
  // Every duration has a range: 0s would be a hot loop, a year a setting nobody meant.
  const std::tuple<const char*, milliseconds, milliseconds, milliseconds, const char*> ranges[] = {
      {"poll-interval", c.poll_interval, seconds(1), hours(24), "1s to 24h"},
      {"resync", c.resync, seconds(1), hours(24), "1s to 24h"},
      {"drain-timeout", c.drain_timeout, seconds(1), hours(24), "1s to 24h"},
      {"unhealthy-after", c.unhealthy_after, seconds(1), hours(24 * 7), "1s to 168h"},
      {"shutdown-timeout", c.shutdown_timeout, seconds(1), minutes(10), "1s to 10m"},
      {"node-poll-interval", c.node_poll_interval, milliseconds(10), minutes(10), "10ms to 10m"},
      {"status-commit-window", c.status_commit_window, milliseconds(0), minutes(1), "0ms to 1m"}};
  for (const auto& [flag, value, low, high, range] : ranges) {
    if (value < low || value > high) return Invalid(flag, range);
  }
  if (absl::Status s = FinishGitFlags(c); !s.ok()) return s;
  if (c.poll_jitter < 0 || c.poll_jitter > 0.5) return Invalid("poll-jitter", "0 to 0.5");
  if (c.workers < 1 || c.workers > 256) return Invalid("workers", "1 to 256");
  if (c.etcd_snapshots_keep < 1 || c.etcd_snapshots_keep > 1000) {
    return Invalid("etcd-snapshots-keep", "1 to 1000");
  }
  if (c.status_branch.empty() || c.status_branch == c.git.branch) {
    return Invalid("status-branch", "must differ from --branch");
  }
  if (absl::Status s = CheckListenAddress("listen", c.listen); !s.ok()) return s;
  static const char* kLevels[] = {"trace", "debug", "info", "warn", "error"};
  if (std::find(std::begin(kLevels), std::end(kLevels), c.log_level) == std::end(kLevels)) {
    return Invalid("log-level", "trace, debug, info, warn or error");
  }
  if (absl::Status s = FinishLeaderElection(c); !s.ok()) return s;
  if (absl::Status s = FinishKubernetesUpgradeJob(c); !s.ok()) return s;
  if (absl::Status s = FinishInstallerRegistryConfig(c); !s.ok()) return s;
  return FinishForgeConfig(c);
}

}  // namespace tr::reconciler
