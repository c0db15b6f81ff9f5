// Configuration of `talos-reconciler run`, from flags, environment variables
// (TALOS_RECONCILER_<FLAG>, e.g. TALOS_RECONCILER_REPO) and an optional config file
// (`--config FILE`, `key = value` lines with the flags' long names). A flag beats the
// environment, which beats the file. Bad configuration fails at start with a message that
// names the setting.
//
// Values only; thread-compatible.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "gitsource/config.h"
#include "reconciler/clients/factory/factory_flags.h"
#include "reconciler/clients/forge/forge_flags.h"
#include "reconciler/clients/registry/registry_flags.h"
#include "reconciler/features/k8s_job/job_flags.h"
#include "reconciler/features/lease/leader_election_flags.h"
#include "reconciler/features/notify/notify_flags.h"
#include "reconciler/features/webhooks/webhook_flags.h"
#include "reconciler/runtime/git_flags.h"

namespace tr::reconciler {

struct DaemonConfig : GitFlags {
  std::string status_branch = "talos-reconciler/status";
  std::string status_author_name = "talos-reconciler";
  std::string status_author_email = "talos-reconciler@localhost";
  std::chrono::seconds poll_interval{60};
  double poll_jitter = 0.1;  // each wait is poll_interval * (1 ± jitter)
  std::chrono::seconds resync{300};
  // How often release proposals are worked out (reconciler/features/proposals/proposer.h); 0:
  // never.
  std::chrono::seconds propose_interval{600};
  std::chrono::milliseconds node_poll_interval{5000};  // how often a node in flight is checked
  std::chrono::seconds drain_timeout{300};             // lifecycle path: cordon and drain
  // Status commits are at least this far apart; updates in between become one commit.
  std::chrono::milliseconds status_commit_window{250};
  // /healthz fails once neither a poll succeeded nor a reconcile finished for this long.
  std::chrono::seconds unhealthy_after{900};
  // SIGTERM/SIGINT: calls in flight are cancelled; the process exits by then at the latest.
  std::chrono::seconds shutdown_timeout{10};
  std::filesystem::path credentials_dir;  // <dir>/<credentials>/talosconfig per profile, or
  std::filesystem::path talosconfig;      // one talosconfig, a context per spec.credentials
  std::filesystem::path state_dir;
  std::string listen = "127.0.0.1:8080";  // health, readiness and metrics
  std::string node_name;                  // the node this process runs on, if any
  int etcd_snapshots_keep = 3;            // per cluster, under <state-dir>/etcd-snapshots
  bool dry_run = false;                   // plan and report, never call Upgrade
  // Looks always ask the nodes: no COSI or Kubernetes watches (docs/running.md).
  bool no_node_watches = false;
  // "inprocess": Kubernetes steps run as supervised tasks of the daemon; "job": as Kubernetes
  // Jobs in the reconciler's namespace (reconciler/features/k8s_job); "off": reported Blocked.
  std::string kubernetes_upgrade_mode = "inprocess";
  k8s_job::JobFlags upgrade_jobs;  // --kubernetes-upgrade-job-*
  // Kubernetes upgrades keep what left the bootstrap manifests (upgrade-k8s --manifests-no-prune).
  bool kubernetes_manifests_no_prune = false;
  int workers = 4;  // clusters reconciled at once
  std::string log_level = "info";
  std::string log_format = "text";    // text (key=value lines) or json (an object a line)
  std::filesystem::path config_file;  // --config, applied before parsing (ApplyConfigFile)
  // Inbound webhooks, outbound notifications and the forge's API (reconciler/features/webhooks,
  // reconciler/features/notify, reconciler/clients/forge).
  webhooks::WebhookFlags webhooks;  // --webhook-*
  notify::NotifyFlags notify;       // --notify
  forge::ForgeFlags forge;          // --forge*
  // The Kubernetes API of the Leases and the upgrade Jobs; empty: the in-cluster account.
  std::filesystem::path kubeconfig;
  lease::LeaderElectionFlags leader_election;  // --leader-elect, --leader-elect-*, --shards
  // The installer repository whose release tags join the release catalog
  // (reconciler/clients/registry); FinishDaemonConfig makes `installer_registry` of it (nullopt:
  // none).
  registry::InstallerRegistryFlags installer_registry_flags;
  std::optional<registry::InstallerRegistryOptions> installer_registry;
  // Image Factories (reconciler/clients/factory): --image-factory and the options of every factory
  // asked; FinishDaemonConfig makes `image_factory` of the flags.
  factory::ImageFactoryFlags image_factory_flags;
  factory::ImageFactoryOptions image_factory;

  int shards() const { return leader_election.shards; }
};

// Registers every setting on `cmd` as a flag with its environment variable, and `--config`.
void AddDaemonFlags(CLI::App& cmd, DaemonConfig& config);

// Reads the `--config FILE` named in `args` (if any) before parsing: each `flag = value` line
// (blank lines and `#` comments aside) becomes the environment variable of that flag unless it
// is already set, so a flag beats the environment, which beats the file. InvalidArgument
// naming the file and line for a malformed line or a key that is not a flag of `cmd`.
// Where each setting of `run` came from, so an error can say so: "the command line",
// "TALOS_RECONCILER_WORKERS" or "fleet.conf:3".
class SettingOrigins {
 public:
  void SetFromFile(const std::string& flag, std::string file_line);
  // The origin of `flag` (long name without --) given the command line `args`; empty when it
  // was not set (a default).
  std::string Of(const std::string& flag, const std::vector<std::string>& args) const;
  // `message` ("--workers: 1 to 256") with " (set by …)" after the flag it starts with.
  std::string Annotate(const std::string& message, const std::vector<std::string>& args) const;

 private:
  std::map<std::string, std::string> from_file_;
};

absl::Status ApplyConfigFile(const std::vector<std::string>& args, const CLI::App& cmd,
                             SettingOrigins* origins = nullptr);

// Checks and completes the parsed configuration: required settings, ranges, directories
// (the state directory created 0700 when missing, made 0700 when this user owns it), secrets
// only over https unless an --*-allow-insecure-http flag says otherwise, a webhook secret of
// at least 16 bytes. InvalidArgument naming the setting.
absl::Status FinishDaemonConfig(DaemonConfig& config);

}  // namespace tr::reconciler
