#include "reconciler/operations/k8s_upgrade/upgrade_k8s_command.h"

#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/signal_stop.h"
#include "core/profile_decode.h"
#include "core/profile_set.h"
#include "fmt/format.h"
#include "gitsource/snapshot.h"
#include "reconciler/clients/cluster_clients.h"
#include "reconciler/operations/k8s_upgrade/k8s_upgrade.h"
#include "reconciler/runtime/cli_error.h"
#include "reconciler/runtime/timezones.h"

namespace tr::reconciler::k8s_upgrade {
namespace {

struct LoadedProfile {
  core::ClusterProfile profile;
  core::SupportMatrix matrix;
};

absl::StatusOr<LoadedProfile> LoadFromFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError("cannot read the profile " + path.string());
  std::ostringstream content;
  content << in.rdbuf();
  core::ValidationOptions validation;
  validation.is_known_timezone = IsKnownTimezone;
  core::Decoded<core::ClusterProfile> decoded =
      core::DecodeClusterProfile(path.string(), content.str(), {}, validation);
  if (!decoded.ok()) {
    return absl::InvalidArgumentError(
        decoded.diagnostics.empty() ? "invalid profile" : decoded.diagnostics.front().ToString());
  }
  return LoadedProfile{*std::move(decoded.value), core::SupportMatrix::BuiltIn()};
}

absl::StatusOr<LoadedProfile> LoadFromRepo(const std::filesystem::path& dir,
                                           const std::string& cluster) {
  absl::StatusOr<gitsource::ProfileSnapshot> snapshot = gitsource::ReadDirectorySnapshot(dir);
  if (!snapshot.ok()) return absl::InvalidArgumentError(std::string(snapshot.status().message()));
  core::ValidationOptions validation;
  validation.is_known_timezone = IsKnownTimezone;
  core::ProfileSet set = core::DecodeProfileSet(snapshot->files, validation);
  for (const core::ClusterProfile& p : set.profiles) {
    if (p.name == cluster) return LoadedProfile{p, set.support_matrix};
  }
  return absl::InvalidArgumentError(
      fmt::format("no valid profile for cluster {} in {}", cluster, dir.string()));
}

// The last line, where a Kubernetes Job's controller reads it (terminationMessagePath). Best
// effort: the exit code already says everything a controller needs.
void WriteTerminationLog(const std::filesystem::path& path, const std::string& line) {
  if (path.empty()) return;
  std::ofstream(path, std::ios::trunc) << line << "\n";
}

UpgradeOptions ToUpgradeOptions(const UpgradeK8sOptions& options, const LoadedProfile& loaded,
                                const core::Version& target) {
  UpgradeOptions upgrade;
  upgrade.target = target;
  upgrade.matrix = loaded.matrix;
  upgrade.pre_pull = options.pre_pull;
  upgrade.poll_interval = options.poll_interval;
  upgrade.static_pod_timeout = options.static_pod_timeout;
  upgrade.kubelet_timeout = options.kubelet_timeout;
  upgrade.prune_manifests = options.prune_manifests;
  upgrade.manifests_timeout = options.manifests_timeout;
  for (const core::NodeSpec& n : loaded.profile.nodes) {
    upgrade.nodes.push_back({n.name, n.address, n.role == core::NodeRole::kControlPlane});
  }
  return upgrade;
}

}  // namespace

int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return kUpgradeOk;
    case absl::StatusCode::kInvalidArgument:
      return kUpgradeInvalid;
    case absl::StatusCode::kFailedPrecondition:
      return kUpgradeRefused;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
      return kUpgradeRetry;
    default:
      return kUpgradeFailed;
  }
}

int RunUpgradeK8s(const UpgradeK8sOptions& options, Env& env, std::stop_token stop,
                  std::ostream& out, std::ostream& err) {
  absl::StatusOr<core::Version> target = core::ParseKubernetesVersion(options.to);
  if (!target.ok()) {
    err << ErrorLine("--to: " + std::string(target.status().message()));
    return kUpgradeInvalid;
  }
  absl::StatusOr<LoadedProfile> loaded = options.profile_file.empty()
                                             ? LoadFromRepo(options.repo_dir, options.cluster)
                                             : LoadFromFile(options.profile_file);
  if (loaded.ok() && loaded->profile.name != options.cluster) {
    loaded = absl::InvalidArgumentError(fmt::format("the profile is for cluster {}, not {}",
                                                    loaded->profile.name, options.cluster));
  }
  if (!loaded.ok()) {
    err << ErrorLine(std::string(loaded.status().message()));
    return kUpgradeInvalid;
  }
  TalosconfigClientFactory factory(options.credentials_dir, {}, env);
  absl::StatusOr<ClusterClients> clients = factory.ForProfile(loaded->profile);
  if (!clients.ok()) {
    err << ErrorLine(std::string(clients.status().message()));
    return kUpgradeInvalid;
  }
  if (!clients->kube) {
    err << ErrorLine("cannot get the admin kubeconfig from any control plane of " +
                     options.cluster);
    return kUpgradeRetry;
  }
  KubernetesUpgrade upgrade(*clients->talos, *clients->kube, env,
                            ToUpgradeOptions(options, *loaded, *target),
                            [&out](const UpgradeProgress& p) { out << p.message << std::endl; });
  UpgradeOutcome outcome = upgrade.Run(stop);
  std::string last_line;
  if (absl::IsCancelled(outcome.status)) {
    last_line =
        fmt::format("upgrade-k8s: {}; run again to resume", std::string(outcome.status.message()));
  } else if (!outcome.status.ok()) {
    last_line = fmt::format("upgrade-k8s: {} failed{}: {}", outcome.component,
                            outcome.node.empty() ? "" : " on " + outcome.node,
                            std::string(outcome.status.message()));
  }
  if (last_line.empty() && outcome.from == target->ToString()) {
    last_line = fmt::format("upgrade-k8s: Kubernetes {}: already done", outcome.from);
  } else if (last_line.empty()) {
    last_line =
        fmt::format("upgrade-k8s: Kubernetes {} → {}: done", outcome.from, target->ToString());
  } else {
    err << last_line << "\n";
  }
  WriteTerminationLog(options.termination_log, last_line);
  return ExitCodeFor(outcome.status);
}

int RunUpgradeK8sUntilSignalled(const UpgradeK8sOptions& options, Env& env, std::ostream& out,
                                std::ostream& err) {
  // A second signal: no more patience.
  SignalStopOptions stopping;
  stopping.exit_code = kUpgradeRetry;
  SignalStop signals(std::move(stopping), env);
  return RunUpgradeK8s(options, env, signals.token(), out, err);
}

}  // namespace tr::reconciler::k8s_upgrade
