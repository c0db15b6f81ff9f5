#include "tests/support/e2e/journal_checks.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "fmt/format.h"
#include "tests/sim/common/journal.h"

namespace tr::e2e {

namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

// Entries that end a node's upgrade once it was touched.
bool EndsUpgrade(const JournalLine& line) {
  return !line.call && (line.what == "up" || line.what == "version" || line.what == "kube-ready" ||
                        line.what == "uncordon");
}

}  // namespace

std::chrono::microseconds NodeUpgradeSpan::busy() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(last_time - first_time);
}

bool IsClientCall(const JournalLine& line) {
  return line.call && !line.detail.starts_with(sim::kFanoutPart);
}

bool IsUpgradeCall(const JournalLine& line) {
  return line.call && (line.what == "/machine.MachineService/Upgrade" ||
                       line.what == "/machine.LifecycleService/Upgrade");
}

bool TouchesNode(const JournalLine& line) {
  if (line.call) {
    return IsUpgradeCall(line) || line.what == "/machine.MachineService/Reboot" ||
           line.what == "/machine.MachineService/Rollback";
  }
  return (line.what == "sequence" && !StartsWith(line.detail, "boot")) || line.what == "cordon" ||
         line.what == "down";
}

std::vector<NodeUpgradeSpan> UpgradeSpans(const std::vector<JournalLine>& journal,
                                          const std::string& cluster, uint64_t since_seq) {
  std::map<std::string, NodeUpgradeSpan> spans;
  std::map<std::string, std::chrono::system_clock::time_point> went_down;
  for (const auto& line : journal) {
    if (line.seq <= since_seq || line.cluster != cluster) continue;
    auto found = spans.find(line.node);
    if (TouchesNode(line) && found == spans.end()) {
      found = spans.emplace(line.node, NodeUpgradeSpan{}).first;
      found->second.node = line.node;
      found->second.first_seq = line.seq;
      found->second.first_time = line.time;
    }
    if (found == spans.end()) continue;
    NodeUpgradeSpan& span = found->second;
    if (TouchesNode(line) || EndsUpgrade(line)) {
      span.last_seq = line.seq;
      span.last_time = line.time;
    }
    if (IsUpgradeCall(line) && line.code == "OK") ++span.upgrade_calls_ok;
    if (IsUpgradeCall(line) && line.code == "CANCELLED") ++span.upgrade_calls_cancelled;
    if (line.call && line.what == "/machine.MachineService/Reboot" && line.code == "OK") {
      ++span.reboot_calls_ok;
    }
    if (!line.call && line.what == "sequence" &&
        (StartsWith(line.detail, "upgrade ") || StartsWith(line.detail, "stageUpgrade "))) {
      ++span.upgrade_sequences;
    }
    if (!line.call && line.what == "version") span.version_changes.push_back(line.detail);
    if (!line.call && line.what == "down") went_down[line.node] = line.time;
    if (!line.call && line.what == "up" && went_down.contains(line.node)) {
      span.down +=
          std::chrono::duration_cast<std::chrono::microseconds>(line.time - went_down[line.node]);
      went_down.erase(line.node);
    }
  }
  std::vector<NodeUpgradeSpan> ordered;
  for (auto& [node, span] : spans) ordered.push_back(std::move(span));
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.first_seq < b.first_seq; });
  return ordered;
}

int CountCalls(const std::vector<JournalLine>& journal, const std::string& cluster,
               const std::string& suffix, const std::string& code, uint64_t since_seq) {
  return static_cast<int>(std::count_if(journal.begin(), journal.end(), [&](const auto& line) {
    return line.seq > since_seq && line.call && line.cluster == cluster &&
           EndsWith(line.what, suffix) && (code.empty() || line.code == code);
  }));
}

int CountStates(const std::vector<JournalLine>& journal, const std::string& cluster,
                const std::string& what, const std::string& detail_part, uint64_t since_seq) {
  return static_cast<int>(std::count_if(journal.begin(), journal.end(), [&](const auto& line) {
    return line.seq > since_seq && !line.call && line.cluster == cluster && line.what == what &&
           line.detail.find(detail_part) != std::string::npos;
  }));
}

std::vector<std::string> TouchedNodes(const std::vector<JournalLine>& journal,
                                      const std::string& cluster, uint64_t since_seq) {
  std::vector<std::string> nodes;
  for (const auto& span : UpgradeSpans(journal, cluster, since_seq)) nodes.push_back(span.node);
  return nodes;
}

std::string OverlapProblem(const std::vector<NodeUpgradeSpan>& spans) {
  for (size_t i = 1; i < spans.size(); ++i) {
    if (spans[i].first_seq <= spans[i - 1].last_seq) {
      return fmt::format("{} was touched (journal #{}) before {} was back (journal #{})",
                         spans[i].node, spans[i].first_seq, spans[i - 1].node,
                         spans[i - 1].last_seq);
    }
  }
  return "";
}

std::string InstallAheadProblem(const std::vector<JournalLine>& journal, const std::string& cluster,
                                uint64_t since_seq, size_t nodes, const std::string& from,
                                const std::string& to) {
  const auto spans = UpgradeSpans(journal, cluster, since_seq);
  if (spans.size() != nodes) {
    return fmt::format("{} nodes touched, not {}:\n{}", spans.size(), nodes, Describe(spans));
  }
  uint64_t last_install = 0, first_reboot = UINT64_MAX;
  for (const JournalLine& line : journal) {
    if (line.seq <= since_seq || line.cluster != cluster) continue;
    if (line.what.ends_with("LifecycleService/Upgrade")) last_install = line.seq;
    if (line.what == "/machine.MachineService/Reboot") first_reboot = std::min(first_reboot, line.seq);
  }
  if (last_install > first_reboot) {
    return fmt::format("an install (#{}) came after the first reboot (#{})", last_install,
                       first_reboot);
  }
  const std::vector<std::string> once{fmt::format("v{} -> v{}", from, to)};
  for (const NodeUpgradeSpan& span : spans) {
    const int installs = span.upgrade_calls_ok + span.upgrade_calls_cancelled;
    if (span.reboot_calls_ok != 1 || span.version_changes != once || installs < 1 ||
        span.upgrade_calls_ok > 2) {
      return fmt::format("{} was not installed once (or twice) and rebooted once onto {}:\n{}",
                         span.node, to, Describe(spans));
    }
  }
  return "";
}

std::string Describe(const std::vector<NodeUpgradeSpan>& spans) {
  std::string text;
  for (const auto& s : spans) {
    std::string versions;
    for (const auto& v : s.version_changes) versions += (versions.empty() ? "" : ", ") + v;
    text += fmt::format(
        "  {}: journal #{}..#{} ({} ms), upgrade calls ok {} (cancelled {}), upgrade "
        "sequences {}, reboots ok {}, versions [{}]\n",
        s.node, s.first_seq, s.last_seq, s.busy().count() / 1000, s.upgrade_calls_ok,
        s.upgrade_calls_cancelled, s.upgrade_sequences, s.reboot_calls_ok, versions);
  }
  return text;
}

uint64_t LastSeq(const std::vector<JournalLine>& journal) {
  return journal.empty() ? 0 : journal.back().seq;
}

}  // namespace tr::e2e
