// `status/<cluster>.yaml` on the status branch: ClusterStatus written as YAML for people to
// read, and read back by the reconciler to resume after a restart.
//
//   apiVersion: talos-reconciler.dev/v1alpha1
//   kind: ClusterStatus
//   cluster: prod-eu-1
//   fence: {generation: 4, holder: <replica>}   (with leader election: core/fence.h)
//   phase: UpgradingTalos
//   message: upgrading w-1 (2/5) to Talos 1.12.0
//   updated: "2026-11-22T03:00:00Z"
//   desiredCommit: {attempted: <sha>, applied: <sha>}
//   talos: {current, target, available, status, message, progress}
//   kubernetes: {...}
//   conditions: [{type, status: "True"|"False", reason, message, lastTransitionTime}]
//   nodes: [{name, role, talos, kubelet, ready, lastOperation, lastUpgradeSeconds}]
//   inFlight: [{node, target, image, path: legacy|lifecycle, bootIdBefore, actorId, phase,
//               started, deadline}]
//   rollout: {prepulledImage, etcdSnapshotImage, settleUntil, failure: {node, talosTarget,
//             message, at}}
//   history: [{at, event}]
//
// Pure; thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "core/decoded.h"
#include "core/status_types.h"

namespace tr::core {

// The status branch keeps one file per cluster under this directory.
inline constexpr std::string_view kStatusDirectory = "status";

// Where a cluster's status lives on the status branch: "status/prod-eu-1.yaml".
std::string ClusterStatusPath(std::string_view cluster);

std::string RenderStatusYaml(const ClusterStatus& status);

// True when the two differ in anything but `updated` (unchanged status is not committed).
bool StatusChanged(const ClusterStatus& a, const ClusterStatus& b);

// True when the two are equal in everything but `updated` and `fence`: then their content
// texts (below) are equal too, and telling so costs no rendering. The converse does not hold
// (a time that differs below the second renders the same).
bool SameContent(const ClusterStatus& a, const ClusterStatus& b);

// The status as text without `updated`: two statuses whose content texts are equal differ only
// in when they were written. Kept by a caller that compares many statuses with one, so the
// one is rendered once.
std::string StatusContentYaml(const ClusterStatus& status);

}  // namespace tr::core
