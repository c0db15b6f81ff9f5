// The rollout executor: performs one action the rollout state machine decided (core/rollout.h)
// on a cluster's nodes through the Talos and Kubernetes APIs (docs/architecture.md).
//
// Errors are classified by ClassifyError (error_class.h): Unavailable / DeadlineExceeded mean
// the node or API could not be reached (try again later; the node was not changed, or the state
// machine will see that it was); Talos' "already in progress" means the node is still busy
// with an earlier install; any other code is the node's own refusal (a bad installer image,
// failed etcd checks, a drain a disruption budget blocks past its timeout under
// policy.drain.onTimeout: halt) and halts the rollout.
//
// Thread-safe when the client factory is.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <stop_token>
#include <string>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "base/mutex.h"
#include "core/profile.h"
#include "core/rollout.h"
#include "reconciler/clients/cluster_clients.h"
#include "reconciler/clients/kube/drain.h"
#include "reconciler/operations/etcd_snapshots.h"

namespace tr::reconciler {

struct [[nodiscard]] ActionResult {
  std::string actor_id;  // from Upgrade or Reboot; empty otherwise
  std::string detail;    // one line for the log, e.g. the snapshot file
  // The step runs on (background_steps.h): nothing to record yet; ask again later. `detail`
  // then says what holds it, when something does.
  bool in_progress = false;
};

// A step of a cluster started in the background and not yet collected (background_steps.h).
struct OutstandingStep {
  core::ActionKind kind = core::ActionKind::kNone;
  std::string node;  // empty for a step of the whole cluster (pre-pull, etcd snapshot)
  std::string image;
  bool done = false;  // finished; the Execute of the same step collects its result
  bool failed = false;  // finished with an error

  bool Is(const core::RolloutDecision& d) const {
    return kind == d.kind && node == d.node && image == d.image;
  }
};

class RolloutExecutor {
 public:
  virtual ~RolloutExecutor() = default;
  virtual absl::StatusOr<ActionResult> Execute(const core::ClusterProfile& profile,
                                               const core::RolloutDecision& decision,
                                               std::stop_token stop) = 0;
  // The step of `cluster` still outstanding in the background, if any; an executor that runs
  // everything inline has none.
  virtual std::optional<OutstandingStep> Outstanding(const std::string& cluster) {
    (void)cluster;
    return std::nullopt;
  }
  // What holds the cluster's running step now, in one line ("held by default/db-0: ..."); empty
  // when nothing does or the executor cannot tell.
  virtual std::string Progress(const std::string& cluster) {
    (void)cluster;
    return "";
  }
  // The result of the cluster's step that finished in the background, taken (Outstanding no
  // longer names it); nullopt while it runs or when there is none. For a step the rollout has
  // moved past, which no Execute of the same step will collect.
  virtual std::optional<absl::StatusOr<ActionResult>> TakeFinished(const std::string& cluster) {
    (void)cluster;
    return std::nullopt;
  }
};

// True when a failed install or upgrade never reached its node: the pull before the install
// failed, or no connection carried the call to the node (apid could not dial it, or no
// endpoint answered). The node was then not asked to change, whatever it does next.
bool AskedNodeNothing(const absl::Status& status);

struct ExecutorOptions {
  std::filesystem::path snapshot_dir;  // etcd snapshots: <dir>/<cluster>-<time>.snapshot
  kube::DrainOptions drain;            // the timeout unless a profile sets policy.drain.timeout
  int keep_snapshots = 3;  // per cluster; older ones are deleted after a new one (etcd_snapshots.h)
};

class TalosRolloutExecutor final : public RolloutExecutor {
 public:
  TalosRolloutExecutor(ClusterClientFactory& clients, ExecutorOptions options, Env& env)
      : clients_(clients),
        options_(std::move(options)),
        env_(env),
        snapshots_(options_.snapshot_dir) {}

  absl::StatusOr<ActionResult> Execute(const core::ClusterProfile& profile,
                                       const core::RolloutDecision& decision,
                                       std::stop_token stop) override;
  // What holds the cluster's drain now, while one waits on a disruption budget.
  std::string Progress(const std::string& cluster) override;

 private:
  struct Call;  // one action as each step below is handed it (executor.cc)
  using Step = absl::StatusOr<ActionResult> (TalosRolloutExecutor::*)(const Call&);
  struct Performer {
    Step step;
    bool on_node;  // the action names one node of the profile
  };
  // What performs each kind of action: one entry per kind that calls a node; a kind without
  // one (a start or a failure, which only record) performs nothing.
  static const std::map<core::ActionKind, Performer>& Performers();

  absl::StatusOr<ActionResult> PrePull(const Call& call);
  absl::StatusOr<ActionResult> Snapshot(const Call& call);
  absl::StatusOr<ActionResult> CallUpgrade(const Call& call);
  absl::StatusOr<ActionResult> InstallImage(const Call& call);
  absl::StatusOr<ActionResult> InstallOnNode(const Call& call, const std::string& image);
  absl::StatusOr<ActionResult> InstallAhead(const Call& call);
  absl::StatusOr<ActionResult> Unstage(const Call& call);
  absl::StatusOr<ActionResult> ActivatedEarly(const Call& call);
  absl::StatusOr<ActionResult> Drain(const Call& call);
  absl::StatusOr<ActionResult> Reboot(const Call& call);
  absl::StatusOr<ActionResult> Complete(const Call& call);
  absl::StatusOr<ActionResult> Rollback(const Call& call);

  ClusterClientFactory& clients_;
  const ExecutorOptions options_;
  Env& env_;
  EtcdSnapshotIndex snapshots_;  // of options_.snapshot_dir
  Mutex held_mu_;
  std::map<std::string, std::string> held_ ABSL_GUARDED_BY(held_mu_);  // by cluster
};

}  // namespace tr::reconciler
