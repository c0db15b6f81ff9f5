// The mark a pending install leaves on a node's Kubernetes Node object. An install ahead of the
// maintenance window writes a Talos version into the node's inactive boot slot without
// rebooting, and nothing in the Talos API shows what that slot holds (docs/talos-api.md §6.5).
// The reconciler writes it into its status file, and also onto the Node (an annotation with
// the mark, a label to select such nodes by), which outlives a status file restored from an
// older commit; the observer reads it back.
//
// The annotation's value is one line of space-separated fields, the version first:
//   v1.13.2 schematic=<64 lowercase hex digits> boot=<boot id>
// `schematic=` is left out for an install of the vanilla installer, `boot=` when the boot id
// was not known. Anyone with write access to the Node can edit it, so the parse takes the
// whole value or none of it.
//
// Pure; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/version.h"

namespace tr::core {

// A Talos install written to a node's inactive slot and not booted yet, as recorded on its
// Kubernetes Node.
struct PendingInstallMark {
  Version target;
  std::string schematic;  // the Image Factory schematic ID installed; empty: the vanilla image
  std::string boot_id;    // the boot during which it was installed; empty when not known

  bool operator==(const PendingInstallMark&) const = default;
};

// The Node annotation holding EncodePendingMark's text.
inline constexpr std::string_view kPendingInstallAnnotation =
    "talos-reconciler.dev/pending-install";
// The Node label set (to "true") while the annotation is, so that the nodes waiting for a
// reboot can be listed with a label selector.
inline constexpr std::string_view kPendingRebootLabel = "talos-reconciler.dev/pending-reboot";
inline constexpr std::string_view kPendingRebootLabelValue = "true";

// The annotation's text for `mark`: "v1.13.2 schematic=<id> boot=<boot id>", each optional
// field left out when empty. ParsePendingMark gives `mark` back when its schematic is empty or
// a schematic ID and its boot id is empty or a token of at most 64 letters, digits, '.', '_'
// or '-' (a boot id as Linux writes it is a UUID); another text otherwise.
std::string EncodePendingMark(const PendingInstallMark& mark);

// The mark `text` holds: a Talos version (with or without "v"), then `schematic=<id>` and
// `boot=<id>`, each at most once and in either order, separated by single spaces. nullopt for
// anything else (an unknown or repeated field, a bad version, schematic or boot id, stray
// spaces, an empty text): a value that does not parse as a whole says nothing.
std::optional<PendingInstallMark> ParsePendingMark(std::string_view text);

}  // namespace tr::core
