// policy.install: ahead (docs/profiles.md "Install ahead"): a Talos 1.13+ step first writes its
// installer to every node's other slot, outside any window and without a cordon, a drain or a
// reboot; inside a window each node is then only cordoned, drained, rebooted and verified. What
// each node holds is remembered as a StagedInstall (rollout_types.h), because nothing in the Talos
// API shows it (docs/talos-api.md, "A staged install").
//
// Pure; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/rollout_types.h"

namespace tr::core {

// What the staged installs have become since they were made. First a pending-install mark on a
// Kubernetes node (pending_mark.h) that the memory does not hold: an install of the node's
// running boot is recalled (kRecallStaged); a mark of an earlier boot is cleared, or reports the
// node activated early when it runs the mark's version. Then, in the memory's order: a node
// that booted its install outside a window and is healthy again is done (activated early; while
// it is not healthy yet, a wait); one that came back on its old version lost the install, which
// is made again while the plan still wants it; one whose install the plan no longer wants (the
// desired version went back, or the release was marked broken) is un-staged by installing the
// version it runs again. nullopt when every staged install still waits for its window.
std::optional<RolloutDecision> SettleStagedInstalls(const RolloutInput& in, Progress progress);

// With policy.install: ahead and nothing in flight, the next node of Talos step `step` to install
// ahead: one on Talos 1.13 or later that does not hold the step's installer in this boot (a
// node below 1.13 is upgraded in the window by its one legacy call, as with inWindow). nullopt
// when there is none.
std::optional<RolloutDecision> NextInstallAhead(const RolloutInput& in, const PlanStep& step,
                                                Progress progress);

// The install `node` holds for its next boot while it still runs the boot `boot_id` it was
// made in; null when none.
const StagedInstall* PendingInstall(const RolloutMemory& memory, std::string_view node,
                                    std::string_view boot_id);

// "; 3 nodes installed, pending reboot: w-0, w-1, cp-0", or "" when none is.
std::string PendingNote(const RolloutMemory& memory);

}  // namespace tr::core
