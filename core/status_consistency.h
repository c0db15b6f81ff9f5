// The rules a status's aggregates obey towards its own node rows (docs/status.md): the current
// Talos and Kubernetes versions are the lowest the rows show, the current schematic is one a
// row still to move shows (the desired one only when no row shows another), and the progress
// counts the rows. BuildClusterStatus computes them from the rows; this checks a record
// against them, for tests and for records read back.
//
// Pure; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "core/profile.h"
#include "core/status.h"

namespace tr::core {

// Each way `status` contradicts its own rows, in words; empty when none. `profile`, when
// given, names the nodes' desired schematics: only then is a current schematic equal to the
// target checked against every row (without it a node's own schematic cannot be told apart).
std::vector<std::string> AggregateContradictions(const ClusterStatus& status,
                                                 const ClusterProfile* profile = nullptr);

}  // namespace tr::core
