// What a simulated node looks like from outside, as a copy: the fleet's snapshots of its nodes
// (Fleet::Node, the control endpoint) and the stage names they use.
//
// Values; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/observed.h"
#include "tests/sim/catalog/fleet_spec.h"

namespace tr::sim {

// core's stage, numbered as machine.MachineStatusEvent.MachineStage.
using MachineStage = core::MachineStage;

// "BOOTING", "RUNNING", ... as in the proto enum.
std::string_view MachineStageName(MachineStage stage);

// The readiness a node's MachineStatus says in `stage`, where the simulator's own is `ready`:
// Talos checks readiness in BOOTING and RUNNING only, and in any other stage no check is unmet,
// so it says ready (getReadinessChecks in machine_status.go, docs/talos-api.md §6.3). The
// simulator keeps its own, and its snapshots show it, so "ready" there still means back.
bool ReportedReady(MachineStage stage, bool ready);

// What a node looks like right now (a copy).
struct NodeSnapshot {
  std::string cluster;
  std::string name;
  std::string address;  // "127.0.42.1" (the API is on port 50000)
  NodeRole role = NodeRole::kWorker;

  bool up = false;             // machine running and its API serving (false while rebooting)
  bool api_reachable = false;  // up and no api_unreachable fault
  MachineStage stage = MachineStage::kUnknown;
  bool ready = false;                         // MachineStatus ready
  std::vector<std::string> unmet_conditions;  // "nodeReady", "services", ...
  std::string sequence;  // running sequence ("upgrade", "reboot", "boot"); empty when idle

  std::string talos_tag;           // Version.tag of the running OS, "v1.11.6"
  std::string kubernetes_version;  // kubelet version, "1.34.1"
  std::string boot_id;             // /proc/sys/kernel/random/boot_id (new UUID per boot)
  int boots = 0;                   // 1 after start, +1 per completed boot
  char active_slot = 'A';          // A/B boot slot the running OS came from
  std::string slot_a;              // Talos tag installed in slot A ("" = empty)
  std::string slot_b;
  std::string next_boot_slot;  // the slot an install or Rollback made the next boot ("" = none)
  std::string fallback_slot;   // "A" while a fatal boot error would revert there ("" = dropped)

  bool kube_ready = false;     // Kubernetes Node Ready condition
  bool unschedulable = false;  // Kubernetes Node spec.unschedulable (cordoned)

  std::optional<uint64_t> etcd_member_id;  // control planes
  bool etcd_started = false;
  bool etcd_healthy = false;
  bool etcd_leader = false;

  std::vector<Fault> faults;  // active faults with remaining counts
  int hanging_calls = 0;      // calls other nodes' apid forward here that hang now (apid_hang)
};

}  // namespace tr::sim
