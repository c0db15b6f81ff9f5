#include "core/status_consistency.h"

#include <optional>

#include "fmt/format.h"

namespace tr::core {
namespace {

// The lowest version the rows show; nullopt when a row shows none.
std::optional<Version> LowestOfRows(const std::vector<NodeStatus>& rows, bool talos) {
  std::optional<Version> low;
  for (const NodeStatus& row : rows) {
    const std::string& text = talos ? row.talos : row.kubelet;
    absl::StatusOr<Version> v = talos ? ParseTalosVersion(text) : ParseKubernetesVersion(text);
    if (!v.ok()) return std::nullopt;
    if (!low || *v < *low) low = *v;
  }
  return low;
}

void CheckCurrent(const ClusterStatus& s, bool talos, std::vector<std::string>& out) {
  const ComponentStatus& c = talos ? s.talos : s.kubernetes;
  if (c.current.empty() || s.nodes.empty()) return;  // not known: nothing claimed
  const std::optional<Version> low = LowestOfRows(s.nodes, talos);
  const std::string rows = low ? low->ToString() : "unknown";
  if (rows != c.current) {
    out.push_back(fmt::format("{}.current is {} but the lowest node row is {}",
                              talos ? "talos" : "kubernetes", c.current, rows));
  }
}

void CheckSchematic(const ClusterStatus& s, const ClusterProfile* profile,
                    std::vector<std::string>& out) {
  const std::string& current = s.talos.schematic_current;
  if (current.empty() || s.talos.schematic_target.empty()) return;
  for (const NodeStatus& row : s.nodes) {
    if (current != s.talos.schematic_target && row.schematic == current) return;
    if (current == s.talos.schematic_target && profile != nullptr && !row.schematic.empty() &&
        row.schematic != DesiredSchematicId(*profile, row.name)) {
      out.push_back(fmt::format("talos.schematic.current is the target but node {} runs {}",
                                row.name, row.schematic));
      return;
    }
  }
  if (current != s.talos.schematic_target) {
    out.push_back(fmt::format("talos.schematic.current {} is on no node row", current));
  }
}

void CheckProgress(const ClusterStatus& s, std::vector<std::string>& out) {
  if (s.talos.progress.empty() || s.nodes.empty()) return;
  if (!s.talos.progress.ends_with(fmt::format("/{}", s.nodes.size()))) {
    out.push_back(fmt::format("talos.progress {} does not count the {} node rows",
                              s.talos.progress, s.nodes.size()));
  }
}

}  // namespace

std::vector<std::string> AggregateContradictions(const ClusterStatus& status,
                                                 const ClusterProfile* profile) {
  std::vector<std::string> out;
  CheckCurrent(status, true, out);
  CheckCurrent(status, false, out);
  CheckSchematic(status, profile, out);
  CheckProgress(status, out);
  return out;
}

}  // namespace tr::core
