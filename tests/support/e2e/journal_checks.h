// What the simulator's journal says about the Talos upgrades the reconciler made: for each node
// of a cluster, the span of journal entries in which it was being upgraded (from the first entry
// that touched it — an Upgrade, LifecycleService/Upgrade, Reboot or Rollback call, an upgrade
// sequence, a cordon, going down — to it being back: up, new version, Kubernetes Ready,
// uncordoned), how many upgrade calls succeeded, how many upgrade sequences ran and how many
// times it came back on another version. Reads (Version, EtcdStatus, ...) and image pre-pulls
// do not touch a node.
//
// Pure functions of journal lines; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/e2e/sim_process.h"

namespace tr::e2e {

struct NodeUpgradeSpan {
  std::string node;
  uint64_t first_seq = 0;  // first entry that touched the node
  uint64_t last_seq = 0;   // last entry of its upgrade (back up, ready, uncordoned)
  std::chrono::system_clock::time_point first_time;
  std::chrono::system_clock::time_point last_time;
  int upgrade_calls_ok = 0;   // MachineService/Upgrade or LifecycleService/Upgrade answered OK
  // Upgrade calls whose caller went away (killed) while the node handled them: the node may
  // have started the upgrade all the same, as Talos does.
  int upgrade_calls_cancelled = 0;
  int upgrade_sequences = 0;  // "upgrade"/"stageUpgrade" sequences the node started
  int reboot_calls_ok = 0;    // MachineService/Reboot answered OK
  std::vector<std::string> version_changes;  // "v1.11.6 -> v1.12.0", each boot on a new version
  std::chrono::microseconds down{0};         // time between going down and coming back up

  std::chrono::microseconds busy() const;  // last_time - first_time
};

// True for a call a client made: every call entry but the parts of a one-to-many call (each
// node's share of it, journaled on that node; tests/sim/common/journal.h).
bool IsClientCall(const JournalLine& line);

// True for MachineService/Upgrade and LifecycleService/Upgrade calls (any answer).
bool IsUpgradeCall(const JournalLine& line);
// True when the entry touches its node (see above).
bool TouchesNode(const JournalLine& line);

// One span per node of `cluster` that was touched after `since_seq`, ordered by first touch.
std::vector<NodeUpgradeSpan> UpgradeSpans(const std::vector<JournalLine>& journal,
                                          const std::string& cluster, uint64_t since_seq = 0);

// Entries of `cluster` after `since_seq` whose `what` ends with `suffix` (e.g.
// "MachineService/Upgrade") and, unless `code` is empty, answered `code`.
int CountCalls(const std::vector<JournalLine>& journal, const std::string& cluster,
               const std::string& suffix, const std::string& code = "", uint64_t since_seq = 0);

// State entries of `cluster` after `since_seq` named `what` (e.g. "etcd-leader") whose detail
// contains `detail_part` (any detail when empty).
int CountStates(const std::vector<JournalLine>& journal, const std::string& cluster,
                const std::string& what, const std::string& detail_part = "",
                uint64_t since_seq = 0);

// The nodes of `cluster` touched after `since_seq`, in order of their first touch.
std::vector<std::string> TouchedNodes(const std::vector<JournalLine>& journal,
                                      const std::string& cluster, uint64_t since_seq = 0);

// An empty string when the spans do not overlap (each node's upgrade ends before the next
// one's begins); otherwise a description of the first overlap.
std::string OverlapProblem(const std::vector<NodeUpgradeSpan>& spans);

// An install-ahead rollout of `cluster` after `since_seq` (policy.install: ahead): `nodes` nodes,
// each rebooted by exactly one Reboot call and changing version once, from `from` to `to`; each
// installed at least once and at most twice (a kill between an install's answer and its record
// repeats it); no install after the first reboot. "" when so, else the first problem.
std::string InstallAheadProblem(const std::vector<JournalLine>& journal, const std::string& cluster,
                                uint64_t since_seq, size_t nodes, const std::string& from,
                                const std::string& to);

// The spans, one per line, for failure messages.
std::string Describe(const std::vector<NodeUpgradeSpan>& spans);

// The last journal sequence number (0 when empty).
uint64_t LastSeq(const std::vector<JournalLine>& journal);

}  // namespace tr::e2e
