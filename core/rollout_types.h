// The rollout's vocabulary as data (rollout.h decides with it): a node's operation in flight,
// what the reconciler remembers between reconciles, the phases, the actions, a decision and the
// state machine's input. Here, apart from the state machine, so that the checks, the decoders
// and the status can use it without the state machine.
//
// Thread-compatible.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/observed.h"
#include "core/plan_types.h"
#include "core/profile.h"
#include "core/timestamp.h"

namespace tr::core {

// Where one node's upgrade is; each phase is recorded before the daemon moves past it.
enum class OperationPhase {
  kRecorded,       // written down; the node has not been asked yet
  kUpgradeCalled,  // legacy: MachineService/Upgrade acknowledged; the node drains and reboots
  kInstalled,      // lifecycle: the image is written to the inactive slot
  kDrained,        // lifecycle: cordoned and drained through the Kubernetes API
  kRebootCalled,   // lifecycle: Reboot acknowledged
};
const char* OperationPhaseName(OperationPhase phase);

struct OperationInFlight {
  std::string node;
  Version target;
  std::string image;
  bool lifecycle = false;      // LifecycleService path (1.13+) rather than legacy Upgrade
  std::string boot_id_before;  // read just before the operation was recorded
  std::string actor_id;        // from the Upgrade or Reboot reply, when known
  OperationPhase phase = OperationPhase::kRecorded;
  TimePoint started;
  TimePoint deadline;
  // The Image Factory schematic ID the installer carries, which the node must run once it is
  // back (a reinstall at the same version changes only this); empty when the profile names no
  // schematic, and then the version alone says whether the node is done.
  std::string schematic{};

  bool operator==(const OperationInFlight&) const = default;
};

struct RolloutFailure {
  std::string node;
  Version talos_target;
  std::string message;
  TimePoint at;
  std::string schematic{};  // the operation's schematic ID, when it named one
  std::string retry{};      // the profile's retry token when it failed (ClusterProfile::retry_token)

  bool operator==(const RolloutFailure&) const = default;
};

// A Talos install written to a node's inactive slot ahead of its reboot (policy.install: ahead).
// Nothing in the Talos API shows what that slot holds, so this record is how the reconciler knows
// (docs/talos-api.md, "A staged install").
struct StagedInstall {
  std::string node;
  Version target;
  std::string image;
  std::string schematic{};  // the installer's schematic ID; empty when the profile names none
  // The boot during which it was installed: another boot id means the node rebooted since, and
  // then it runs the install (activated early) or it lost it.
  std::string boot_id{};
  TimePoint installed{};
  // No longer wanted: recorded before the running version is installed over it (kUnstageNode),
  // so that a restart in between never reboots the node expecting this install.
  bool withdrawn = false;

  bool operator==(const StagedInstall&) const = default;
};

// What the reconciler remembers about a cluster's rollout between reconciles.
struct RolloutMemory {
  std::vector<OperationInFlight> in_flight;  // one node, or up to maxParallelWorkers workers
  std::string prepulled_image;               // installer image already pulled on the step's nodes
  // The installers of nodes with their own schematic (PlanStep::own_installers) already pulled
  // on them, of one Talos tag.
  std::vector<std::string> prepulled_node_images{};
  std::string etcd_snapshot_image;           // the etcd snapshot was taken for this target image
  std::optional<TimePoint> settle_until;
  std::optional<RolloutFailure> failure;  // halts the cluster until the desired Talos or the retry token changes
  std::vector<StagedInstall> staged{};    // installed ahead, pending their reboot in a window

  // An operation of `node` is in flight.
  bool InFlight(std::string_view node) const;

  bool operator==(const RolloutMemory&) const = default;
};

// Maintenance windows, evaluated by the caller (time zones need the tz database).
struct WindowState {
  bool open = true;
  std::optional<TimePoint> next_open;
};

// Extra health checks of the policy, run by the caller between nodes (health_gates.h).
struct ExtraGateResult {
  bool passed = true;
  std::string message;                     // why not, when not passed
  std::optional<TimePoint> failing_since;  // start of the wait that policy.gateTimeout bounds
};

// spec.promotion, evaluated by the caller from the named clusters' status (promotion.h).
struct PromotionVerdict {
  bool ready = true;
  std::string message;                 // "waiting for staging (Ready on 1.12.0 for 3h of 24h)"
  std::optional<TimePoint> ready_at;   // when the soak ends, if it is only time that is missing
};

enum class ClusterPhase {
  kReady,
  kUpgradingTalos,
  kUpgradingKubernetes,
  kUpgradeFailed,
  kBlocked,
  kPaused,
  kWaitingForWindow,
  kWaitingForGate,
  kWaitingForPromotion,
};
const char* ClusterPhaseName(ClusterPhase phase);  // "Ready", "UpgradingTalos", ...

enum class ActionKind {
  kNone,          // nothing to do now; requeue at wait_until if set
  kPrePullImage,  // pull `image` on `nodes`
  kSnapshotEtcd,  // save an etcd snapshot before the first control plane
  kStartNode,     // record `operation` (phase kRecorded) on the status branch
  kCallUpgrade,   // legacy MachineService/Upgrade on `node`
  kInstallImage,  // LifecycleService/Upgrade on `node`
  kDrainNode,     // cordon and drain `node`
  kRebootNode,    // Reboot `node`
  kCompleteNode,  // `node` verified: uncordon if cordoned, clear it, start the settle time
  kRollbackNode,  // roll `node` back to its other slot, then record `failure`
  kFailNode,      // record `failure`; no further node is touched
  kInstallAhead,  // policy.install: ahead: pull and install `image` on `node`, no cordon, no reboot
  kUnstageNode,   // install the running version's `image` over `node`'s pending install
  kActivatedEarly,  // `node` booted its pending install outside a window and is healthy: done
  kRecallStaged,    // record `staged`, read back from the node's pending-install mark
  kWithdrawStaged,  // record `node`'s pending install as no longer wanted, before kUnstageNode
  kStartKubernetesUpgrade,  // hand the Kubernetes step to the upgrade-k8s job (the last kind)
};
const char* ActionKindName(ActionKind kind);

// What the shell needs to know of each kind of action, from one table (rollout_types.cc), so
// no code outside core asks which kind an action is.
struct ActionTraits {
  const char* name = nullptr;  // as in status, logs and JSON: "start-node"
  // The reconcile acts on it (every kind but kNone and the Kubernetes step, which is handed
  // to the upgrade runner).
  bool acts = false;
  // It changes only what is recorded (a node's start, a failure): no call to any node.
  bool only_records = false;
  // It starts something a failing health check holds: the gates are consulted first.
  bool gated = false;
  // A step of the same cluster still running in the background holds it.
  bool held_by_running_step = false;
  // It changes no node, so the look that decided it holds for the next decision.
  bool keeps_observation = false;
  // It changes no etcd member (health, membership, leadership): what the reconcile read of
  // etcd before it holds for the reconcile's next look.
  bool keeps_etcd = false;
  // Worth a line in the status history.
  bool notable = false;
  // Performed on a thread of its own (reconciler/operations/background_steps.h).
  bool runs_in_background = false;
  // Its record may go out with the next record of the reconcile (RecordMayWaitForNext).
  bool record_may_wait = false;
  // Handed to the Kubernetes upgrade runner instead of the executor.
  bool handed_over = false;
  // It begins a node's upgrade (counted as started).
  bool starts_node = false;
  // It ends a node's upgrade, with this result ("completed", "failed", "rolled_back");
  // nullptr otherwise.
  const char* ends_node = nullptr;
  // The node is done: the health gates are checked afresh before the next one.
  bool completes_node = false;
};
const ActionTraits& TraitsOf(ActionKind kind);

struct Progress {
  int done = 0;
  int total = 0;
  std::string ToString() const;  // "2/5"
};

struct RolloutDecision {
  ActionKind kind = ActionKind::kNone;
  ClusterPhase phase = ClusterPhase::kReady;
  std::string message;  // one line for logs and status: "upgrading w-1 (2/5)"
  std::string node;
  std::vector<std::string> nodes;
  std::string image;
  bool node_image = false;  // kPrePullImage: `image` is nodes' own installer, not the step's
  // kCompleteNode: the look that decided it saw the Kubernetes node cordoned (true when it
  // could not tell). Talos uncordons a node itself after a legacy upgrade.
  bool seen_cordoned = true;
  std::optional<OperationInFlight> operation;  // kStartNode
  // A call to the node in flight: the boot it is made on, which guards the operation's next
  // phases when it was recorded without one (core::AfterCallNeverReceived).
  std::string boot_id;
  std::optional<RolloutFailure> failure;       // kFailNode, kRollbackNode
  std::optional<StagedInstall> staged;  // kInstallAhead, kRecallStaged: what the node holds
  std::optional<TimePoint> wait_until;
  Progress progress;
};

// How many times less often a node in flight is polled while its events are heard.
inline constexpr int kHeardPollFactor = 5;

struct RolloutInput {
  const ClusterProfile& profile;
  const ClusterPlan& plan;
  const ObservedCluster& observed;
  const RolloutMemory& memory;
  WindowState window;
  ExtraGateResult extra_gates;
  TimePoint now;
  PromotionVerdict promotion = {};
  std::chrono::seconds poll_interval{10};  // how soon to look again at a node in flight
  // Every node in flight is heard: its events wake the cluster when its wait ends, so it is
  // looked at only every kHeardPollFactor poll intervals besides.
  bool in_flight_heard = false;
  // The first step is Kubernetes and its upgrade task already started for that step's target:
  // seen through like a node in flight, not held by the start checks again.
  bool kubernetes_step_started = false;
};

}  // namespace tr::core
