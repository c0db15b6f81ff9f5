#include "reconciler/app/daemon/daemon_config.h"

#include <cstdlib>
#include <fstream>
#include <system_error>
#include <tuple>

#include "core/text.h"
#include "fmt/format.h"
#include "reconciler/clients/talos/talosconfig.h"
#include "reconciler/runtime/flags.h"
#include "reconciler/runtime/private_files.h"

namespace tr::reconciler {
namespace {

using flags::DurationFlag;
using flags::EnvName;
using flags::Flag;
using flags::Invalid;
using flags::MillisFlag;

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
  DurationFlag(cmd, "propose-interval", c.propose_interval,
               "How often release proposals (the profiles' `updates` policy) are worked out and "
               "pushed; 0s: never");
  DurationFlag(cmd, "drain-timeout", c.drain_timeout, "How long a drain may take");
  DurationFlag(cmd, "unhealthy-after", c.unhealthy_after,
               "/healthz fails after this long without a successful poll or reconcile");
  DurationFlag(cmd, "shutdown-timeout", c.shutdown_timeout,
               "How long SIGTERM may take before the process exits anyway");
  MillisFlag(cmd, "node-poll-interval", c.node_poll_interval,
             "How often a node being upgraded is looked at: 5s, 200ms (default 5s)");
  MillisFlag(cmd, "status-commit-window", c.status_commit_window,
             "Status commits are one per window on average (after a quiet spell up to 3 go out "
             "without a wait); updates that wait share one, and news alone waits a window "
             "for a record to go with: 250ms, 1s, 0ms (default 250ms)");
  Flag(cmd, "credentials-dir", c.credentials_dir,
       "Directory of credentials: <dir>/<credentials>/talosconfig per profile");
  Flag(cmd, "talosconfig", c.talosconfig,
       "Instead of --credentials-dir: one talosconfig, the context named by each profile's "
       "spec.credentials (default: $TALOSCONFIG, else ~/.talos/config, as talosctl)");
  Flag(cmd, "state-dir", c.state_dir, "Directory for the Git mirror and local state")->required();
  Flag(cmd, "listen", c.listen, "host:port for /healthz, /readyz and /metrics");
  Flag(cmd, "node-name", c.node_name, "The node this process runs on (upgraded last)");
  Flag(cmd, "etcd-snapshots-keep", c.etcd_snapshots_keep,
       "etcd snapshots kept per cluster under <state-dir>/etcd-snapshots; older are deleted");
  flags::Switch(cmd, "dry-run", c.dry_run, "Plan and report; never upgrade");
  flags::Switch(cmd, "no-node-watches", c.no_node_watches,
                "Look at nodes by asking them every time: no MachineStatus or Node watches of "
                "the clusters looked at often");
  Flag(cmd, "workers", c.workers, "Clusters reconciled at once");
  Flag(cmd, "kubernetes-upgrade-mode", c.kubernetes_upgrade_mode,
       "inprocess: run Kubernetes upgrades as daemon tasks; job: as Kubernetes Jobs; off: "
       "report them Blocked")
      ->check(CLI::IsMember({"inprocess", "job", "off"}));
  c.upgrade_jobs.AddFlags(cmd);
  flags::Switch(cmd, "kubernetes-manifests-no-prune", c.kubernetes_manifests_no_prune,
                "Kubernetes upgrades keep the objects that left Talos's bootstrap manifests "
                "(as upgrade-k8s --manifests-no-prune)");
  Flag(cmd, "log-level", c.log_level, "trace, debug, info, warn or error");
  Flag(cmd, "log-format", c.log_format, "text (key=value lines) or json (one object a line)")
      ->check(CLI::IsMember({"text", "json"}));
  c.webhooks.AddFlags(cmd);
  c.notify.AddFlags(cmd);
  c.forge.AddFlags(cmd);
  Flag(cmd, "kubeconfig", c.kubeconfig,
       "The Kubernetes API of the Leases and upgrade Jobs (default: the in-cluster service "
       "account)");
  c.leader_election.AddFlags(cmd);
  c.installer_registry_flags.AddFlags(cmd);
  c.image_factory_flags.AddFlags(cmd);
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

// Exactly one of --credentials-dir and --talosconfig (as talosctl finds one when neither is
// given: $TALOSCONFIG, else ~/.talos/config), and it exists.
absl::Status FinishTalosCredentials(DaemonConfig& c) {
  if (c.credentials_dir.empty() && c.talosconfig.empty()) {
    c.talosconfig = talos::DefaultTalosconfigPath();
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
      {"propose-interval", c.propose_interval, seconds(0), hours(24), "0s to 24h"},
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
  if (absl::Status s = c.leader_election.Finish(); !s.ok()) return s;
  const bool job_mode = c.kubernetes_upgrade_mode == "job";
  if (absl::Status s = c.upgrade_jobs.Finish(job_mode); !s.ok()) return s;
  // A Job mounts one talosconfig per credentials name, the --credentials-dir layout.
  if (job_mode && !c.talosconfig.empty()) {
    return Invalid("talosconfig",
                   "--kubernetes-upgrade-mode job needs --credentials-dir (a Job mounts one "
                   "talosconfig Secret per credentials name)");
  }
  auto registry = c.installer_registry_flags.Finish();
  if (!registry.ok()) return registry.status();
  c.installer_registry = *std::move(registry);
  auto image_factory = c.image_factory_flags.Finish();
  if (!image_factory.ok()) return image_factory.status();
  c.image_factory = *std::move(image_factory);
  if (absl::Status s = c.webhooks.Finish(); !s.ok()) return s;
  if (absl::Status s = c.notify.Finish(); !s.ok()) return s;
  return c.forge.Finish(c.git.remote.url);
}

}  // namespace tr::reconciler
