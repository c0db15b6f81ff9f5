// What the daemon will do with a plan: the phase it would report now and, for each step,
// whether it runs the step, waits before it, or will not run it at all. `plan` prints this
// beside every step so that the plan and `run` agree: it is worked out by the rollout's own
// decision (DecideNextAction, the start checks of start_checks.h in their order), not by a
// second set of rules.
//
// Pure: time is passed in. Thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/observed.h"
#include "core/planner.h"
#include "core/profile.h"
#include "core/rollout.h"

namespace tr::core {

enum class StepRun {
  kRuns,    // the daemon performs it when its turn comes
  kWaits,   // the next step, held now by a start check (window, promotion, gate, pause, ...)
  kNotRun,  // the daemon will not perform it: off in this daemon, halted, or after such a step
};
const char* StepRunName(StepRun run);  // "runs" | "waits" | "not-run"

struct StepOutlook {
  StepRun run = StepRun::kRuns;
  std::string reason;  // why it waits or is not run; empty when it runs
};

struct PlanOutlook {
  ClusterPhase phase = ClusterPhase::kReady;  // what the daemon would record now
  std::string next;                           // its message: what it does or waits for next
  std::vector<StepOutlook> steps;             // one per plan step
};

struct OutlookInput {
  const ClusterProfile& profile;
  const ClusterPlan& plan;
  const ObservedCluster& observed;
  RolloutMemory memory;   // from the recorded status, when known
  WindowState window;     // the maintenance windows, evaluated at `now`
  ExtraGateResult gates;  // the health checks' last answers, when known
  // spec.promotion as the recorded statuses say; unset when they are not known (then a
  // profile with spec.promotion waits, saying it was not evaluated).
  std::optional<PromotionVerdict> promotion;
  bool kubernetes_upgrades = true;  // the daemon runs Kubernetes steps (--kubernetes-upgrade-mode)
  bool kubernetes_step_started = false;
  TimePoint now;
};

PlanOutlook OutlookOf(const OutlookInput& input);

// The decision that replaces starting a Kubernetes step when the daemon does not run them
// itself (`why`: "--kubernetes-upgrade-mode off", "dry run"): Blocked, naming the step and
// the command that performs it by hand.
RolloutDecision KubernetesStepNotRun(const RolloutDecision& start, const ClusterProfile& profile,
                                     const PlanStep& step, std::string_view why);

}  // namespace tr::core
