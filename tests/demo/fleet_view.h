// What scripts/demo prints about the fleet, rendered from status files of the status branch
// that the script took from ONE commit (so a line never mixes two states of a cluster).
// Thread-compatible: pure functions of their input.
#pragma once

#include <string>

namespace tr::demo {

// One line for a cluster's status file text (status/<cluster>.yaml): name, a bar with one cell
// per node ('#' on the target and ready, '>' upgrading or rebooting, '.' still to do), the
// count, phase, versions and message. Unparsable text gives a line saying so.
std::string FleetLine(const std::string& status_yaml);

// What changed between two status files of one cluster: Talos and Kubernetes versions from ->
// to and how many nodes moved, or "unchanged".
std::string RecapLine(const std::string& before_yaml, const std::string& after_yaml);

}  // namespace tr::demo
