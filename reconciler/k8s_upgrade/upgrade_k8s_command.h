// `talos-reconciler upgrade-k8s`: one minor Kubernetes upgrade of one cluster (KubernetesUpgrade),
// for people, the daemon and a Kubernetes Job. The cluster comes from a profile file or from a
// checkout of the profile repository; credentials from <credentials-dir>/<credentials>/talosconfig.
// Prints one progress line per step on `out`, the failure on `err`.
//
// Exit codes, chosen so a Job's podFailurePolicy can tell "retry" from "stop":
//   0  done, or every component already at the target
//   1  invalid input: flags, profile, credentials, a target that is a downgrade
//   2  refused by a pre-check, nothing changed (Talos too old, two minors, removed API in use)
//   3  a component failed (image pull, static pod not Ready, kubelet not back): look first
//   4  an API did not answer: run again, it resumes where it stopped
// Thread-compatible.
#pragma once

#include <chrono>
#include <filesystem>
#include <ostream>
#include <string>

#include "absl/status/status.h"

namespace tr::reconciler::k8s_upgrade {

inline constexpr int kUpgradeOk = 0;
inline constexpr int kUpgradeInvalid = 1;
inline constexpr int kUpgradeRefused = 2;
inline constexpr int kUpgradeFailed = 3;
inline constexpr int kUpgradeRetry = 4;

// The exit code for a run's status.
int ExitCodeFor(const absl::Status& status);

struct UpgradeK8sOptions {
  std::string cluster;
  std::string to;                      // "1.35.0" or "v1.35.0"
  std::filesystem::path profile_file;  // either this
  std::filesystem::path repo_dir;      // or a checkout holding clusters/<cluster>.yaml
  std::filesystem::path credentials_dir;
  bool pre_pull = true;
  std::chrono::milliseconds poll_interval{1000};
  std::chrono::milliseconds static_pod_timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds kubelet_timeout{std::chrono::minutes(3)};
};

int RunUpgradeK8s(const UpgradeK8sOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tr::reconciler::k8s_upgrade
