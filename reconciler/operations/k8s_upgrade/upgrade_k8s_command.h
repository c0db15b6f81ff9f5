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
//   4  an API did not answer, or the run was stopped by SIGTERM/SIGINT (as a Job's pod is when
//      it is deleted or evicted): run again, it resumes where it stopped
// On SIGTERM or SIGINT the run stops at the next safe point: before the next component's
// configuration is sent, or in the wait for one whose configuration was applied (never in the
// middle of a call). It says where it stopped; a second signal ends it at once, which is as
// safe as a kill -9 (every component is read back from the node's configuration on a new run).
// Thread-compatible.
#pragma once

#include <chrono>
#include <filesystem>
#include <ostream>
#include <stop_token>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "base/env.h"

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
  bool prune_manifests = true;  // --manifests-no-prune: false (UpgradeOptions::prune_manifests)
  std::chrono::milliseconds manifests_timeout{std::chrono::minutes(5)};
  // When set, the last line (done, failed or stopped) is also written here, for a Kubernetes
  // Job's terminationMessagePath ("/dev/termination-log").
  std::filesystem::path termination_log;
};

// One run; it stops (exit code 4) when `stop` is requested.
// `env`: the real environment (the calls and the signals are real).
int RunUpgradeK8s(const UpgradeK8sOptions& options, Env& env, std::stop_token stop,
                  std::ostream& out, std::ostream& err);

// RunUpgradeK8s stopped by SIGTERM/SIGINT (base/signal_stop.h; a second signal exits
// at once with exit code 4): what `talos-reconciler upgrade-k8s` runs.
int RunUpgradeK8sUntilSignalled(const UpgradeK8sOptions& options, Env& env, std::ostream& out,
                                std::ostream& err);

}  // namespace tr::reconciler::k8s_upgrade
