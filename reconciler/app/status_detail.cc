#include "reconciler/app/status_detail.h"

#include <sstream>

#include "fmt/format.h"

namespace tr::reconciler {
namespace {

using std::chrono::seconds;

seconds Between(core::TimePoint from, core::TimePoint to) {
  return std::chrono::duration_cast<seconds>(to - from);
}

std::string Ago(core::TimePoint at, core::TimePoint now) {
  return ShortDuration(Between(at, now)) + " ago";
}

std::string Or(const std::string& text, const char* otherwise) {
  return text.empty() ? otherwise : text;
}

// "1.11.6 → 1.12.0", or the one version when there is nothing to move.
std::string Versions(const core::ComponentStatus& c) {
  if (c.target.empty() || c.current == c.target) return Or(c.current, "?");
  return fmt::format("{} → {}", Or(c.current, "?"), c.target);
}

std::string Component(const core::ComponentStatus& c) {
  std::string line = fmt::format("{}  {}", Versions(c), core::ComponentStateName(c.state));
  if (!c.progress.empty()) line += " " + c.progress;
  if (!c.available.empty() && c.available != c.target) {
    line += fmt::format("  (newest release {})", c.available);
  }
  if (!c.message.empty()) line += ": " + c.message;
  return line;
}

std::string ShortId(const std::string& id) { return id.empty() ? "-" : id.substr(0, 12); }

void AddHeader(const core::ClusterStatus& s, core::TimePoint now, std::string& out) {
  constexpr const char* kLine = "{:<12}{}\n";
  out += fmt::format(kLine, "Cluster", s.cluster);
  out += fmt::format(kLine, "Phase",
                     fmt::format("{}{}", core::ClusterPhaseName(s.phase),
                                 s.message.empty() ? "" : ": " + s.message));
  out += fmt::format(kLine, "Talos", Component(s.talos));
  if (!s.talos.schematic_target.empty()) {
    out += fmt::format(kLine, "Schematic",
                       fmt::format("{} → {}", ShortId(s.talos.schematic_current),
                                   ShortId(s.talos.schematic_target)));
  }
  out += fmt::format(kLine, "Kubernetes", Component(s.kubernetes));
  if (!s.desired_commit_applied.empty()) {
    out += fmt::format(kLine, "Applied", s.desired_commit_applied.substr(0, 12));
  }
  if (!s.desired_commit_attempted.empty() &&
      s.desired_commit_attempted != s.desired_commit_applied) {
    out += fmt::format(kLine, "Attempting", s.desired_commit_attempted.substr(0, 12));
  }
  out += fmt::format(kLine, "Updated",
                     fmt::format("{} ({})", core::FormatTimestamp(s.updated), Ago(s.updated, now)));
  if (s.proposal) {
    out += fmt::format(
        kLine, "Proposal",
        s.proposal->pull_request > 0
            ? fmt::format("{} (pull request #{})", s.proposal->branch, s.proposal->pull_request)
            : s.proposal->branch);
  }
}

void AddFailure(const core::ClusterStatus& s, core::TimePoint now, std::string& out) {
  if (!s.rollout.failure) return;
  const core::RolloutFailure& f = *s.rollout.failure;
  out += fmt::format("\nHalted by a failure{} on Talos {}, {}:\n  {}\n",
                     f.node.empty() ? "" : " of " + f.node, f.talos_target.ToString(),
                     Ago(f.at, now), f.message);
  out += fmt::format(
      "  Once the cause is fixed: talos-reconciler retry {} --reason \"...\" --push\n", s.cluster);
}

void AddInFlight(const core::ClusterStatus& s, core::TimePoint now, std::string& out) {
  if (s.rollout.in_flight.empty()) return;
  constexpr const char* kRow = "  {:<20} {:<10} {:<14} {:<12} {}\n";
  out += "\nIn flight\n";
  out += fmt::format(kRow, "NODE", "TARGET", "PHASE", "STARTED", "DEADLINE");
  for (const core::OperationInFlight& op : s.rollout.in_flight) {
    const seconds left = Between(now, op.deadline);
    out += fmt::format(kRow, op.node, op.target.ToString(), core::OperationPhaseName(op.phase),
                       Ago(op.started, now),
                       left.count() > 0 ? "in " + ShortDuration(left) : "passed");
  }
}

// The phase of `node`'s operation in flight, "-" when none.
std::string NodePhase(const core::ClusterStatus& s, const std::string& node) {
  for (const core::OperationInFlight& op : s.rollout.in_flight) {
    if (op.node == node) return core::OperationPhaseName(op.phase);
  }
  return "-";
}

void AddNodes(const core::ClusterStatus& s, core::TimePoint now, std::string& out) {
  constexpr const char* kRow =
      "  {:<20} {:<13} {:<9} {:<9} {:<13} {:<6} {:<14} {:<10} {:<10} {}\n";
  out += "\nNodes\n";
  out += fmt::format(kRow, "NAME", "ROLE", "TALOS", "KUBELET", "SCHEMATIC", "READY", "PHASE",
                     "SEEN", "BOOTED", "LAST OPERATION");
  for (const core::NodeStatus& n : s.nodes) {
    const std::string seen = n.reachable ? "now" : n.last_seen ? Ago(*n.last_seen, now) : "never";
    out += fmt::format(kRow, n.name, n.role, Or(n.talos, "?"), Or(n.kubelet, "?"),
                       ShortId(n.schematic), n.ready ? "yes" : "no", NodePhase(s, n.name), seen,
                       n.boot_seen ? Ago(*n.boot_seen, now) : "-",
                       Or(n.last_operation, "-"));
  }
}

void AddConditionsAndChecks(const core::ClusterStatus& s, core::TimePoint now, std::string& out) {
  if (!s.conditions.empty()) {
    constexpr const char* kRow = "  {:<18} {:<6} {:<12} {:<10} {}\n";
    out += "\nConditions\n";
    out += fmt::format(kRow, "TYPE", "STATUS", "REASON", "SINCE", "MESSAGE");
    for (const core::Condition& c : s.conditions) {
      out += fmt::format(kRow, c.type, c.status ? "True" : "False", c.reason,
                         ShortDuration(Between(c.last_transition, now)), c.message);
    }
  }
  if (s.gates.results.empty()) return;
  out += "\nHealth checks\n";
  for (const core::GateResult& r : s.gates.results) {
    out += fmt::format("  {:<18} {:<9} {} ({})\n", r.name, r.healthy ? "healthy" : "unhealthy",
                       r.message, Ago(r.checked, now));
  }
}

// Oldest first, each event with the time it took until the next one (the last: until now).
void AddHistory(const core::ClusterStatus& s, core::TimePoint now, std::string& out) {
  if (s.history.empty()) return;
  out += "\nHistory\n";
  for (size_t i = 0; i < s.history.size(); ++i) {
    const core::TimePoint until = i + 1 < s.history.size() ? s.history[i + 1].at : now;
    out += fmt::format("  {}  {:>6}  {}\n", core::FormatTimestamp(s.history[i].at),
                       ShortDuration(Between(s.history[i].at, until)), s.history[i].event);
  }
}

// Columns padded up to an empty last one leave trailing blanks; nobody wants those copied.
std::string WithoutTrailingBlanks(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

}  // namespace

std::string ShortDuration(seconds duration) {
  const auto n = duration.count();
  if (n < 0) return "0s";
  if (n < 120) return fmt::format("{}s", n);
  if (n < 2 * 3600) return fmt::format("{}m", n / 60);
  if (n < 2 * 86400) return fmt::format("{}h", n / 3600);
  return fmt::format("{}d", n / 86400);
}

std::string RenderClusterDetail(const core::ClusterStatus& status, core::TimePoint now) {
  std::string out;
  AddHeader(status, now, out);
  AddFailure(status, now, out);
  AddInFlight(status, now, out);
  AddNodes(status, now, out);
  AddConditionsAndChecks(status, now, out);
  AddHistory(status, now, out);
  return WithoutTrailingBlanks(out);
}

}  // namespace tr::reconciler
