#include "core/status_yaml.h"

#include "core/profile_decode.h"
#include "core/strict_yaml.h"
#include "core/yaml_decode.h"
#include "core/yaml_word.h"
#include "fmt/format.h"
#include "yaml-cpp/yaml.h"

namespace tr::core {
namespace {

void EmitString(YAML::Emitter& out, const char* key, const std::string& value) {
  out << YAML::Key << YamlWord{key} << YAML::Value << YAML::DoubleQuoted << value;
}

void EmitComponent(YAML::Emitter& out, const char* key, const ComponentStatus& c) {
  out << YAML::Key << YamlWord{key} << YAML::Value << YAML::BeginMap;
  out << YAML::Key << YamlWord{"current"} << YAML::Value << YAML::DoubleQuoted << c.current;
  out << YAML::Key << YamlWord{"target"} << YAML::Value << YAML::DoubleQuoted << c.target;
  out << YAML::Key << YamlWord{"available"} << YAML::Value << YAML::DoubleQuoted << c.available;
  out << YAML::Key << YamlWord{"status"} << YAML::Value << YamlWord{ComponentStateName(c.state)};
  out << YAML::Key << YamlWord{"message"} << YAML::Value << YAML::DoubleQuoted << c.message;
  out << YAML::Key << YamlWord{"progress"} << YAML::Value << YAML::DoubleQuoted << c.progress;
  // Only for a profile with a schematic, so other files keep their shape.
  if (!c.schematic_target.empty()) {
    out << YAML::Key << YamlWord{"schematic"} << YAML::Value << YAML::BeginMap;
    EmitString(out, "current", c.schematic_current);
    EmitString(out, "target", c.schematic_target);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

// Written only when there are labels, so a cluster without any keeps the file's earlier shape.
void EmitLabels(YAML::Emitter& out, const std::map<std::string, std::string>& labels) {
  if (labels.empty()) return;
  out << YAML::Key << YamlWord{"labels"} << YAML::Value << YAML::BeginMap;
  for (const auto& [key, value] : labels) EmitString(out, key.c_str(), value);
  out << YAML::EndMap;
}

// Written only with leader election (a record without a fence keeps the file's earlier shape).
void EmitFence(YAML::Emitter& out, const std::optional<Fence>& fence) {
  if (!fence) return;
  out << YAML::Key << YamlWord{"fence"} << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << YamlWord{"generation"} << YAML::Value << fence->generation;
  EmitString(out, "holder", fence->holder);
  out << YAML::EndMap;
}

void EmitInFlight(YAML::Emitter& out, const std::vector<OperationInFlight>& ops) {
  out << YAML::Key << YamlWord{"inFlight"} << YAML::Value << YAML::BeginSeq;
  for (const OperationInFlight& op : ops) {
    out << YAML::BeginMap;
    EmitString(out, "node", op.node);
    EmitString(out, "target", op.target.ToString());
    EmitString(out, "image", op.image);
    // Only for a profile with a schematic, so other files keep their shape.
    if (!op.schematic.empty()) EmitString(out, "schematic", op.schematic);
    out << YAML::Key << YamlWord{"path"} << YAML::Value
        << YamlWord{op.lifecycle ? "lifecycle" : "legacy"};
    EmitString(out, "bootIdBefore", op.boot_id_before);
    EmitString(out, "actorId", op.actor_id);
    out << YAML::Key << YamlWord{"phase"} << YAML::Value << YamlWord{OperationPhaseName(op.phase)};
    EmitString(out, "started", FormatTimestamp(op.started));
    EmitString(out, "deadline", FormatTimestamp(op.deadline));
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void EmitRollout(YAML::Emitter& out, const RolloutMemory& m) {
  out << YAML::Key << YamlWord{"rollout"} << YAML::Value << YAML::BeginMap;
  EmitString(out, "prepulledImage", m.prepulled_image);
  if (!m.prepulled_node_images.empty()) {  // only with per-node schematics: others keep their shape
    out << YAML::Key << YamlWord{"prepulledNodeImages"} << YAML::Value << YAML::BeginSeq;
    for (const std::string& image : m.prepulled_node_images) out << YAML::DoubleQuoted << image;
    out << YAML::EndSeq;
  }
  EmitString(out, "etcdSnapshotImage", m.etcd_snapshot_image);
  if (m.settle_until) EmitString(out, "settleUntil", FormatTimestamp(*m.settle_until));
  if (!m.staged.empty()) {  // only with policy.install: ahead: other files keep their shape
    out << YAML::Key << YamlWord{"staged"} << YAML::Value << YAML::BeginSeq;
    for (const StagedInstall& s : m.staged) {
      out << YAML::BeginMap;
      EmitString(out, "node", s.node);
      EmitString(out, "target", s.target.ToString());
      EmitString(out, "image", s.image);
      if (!s.schematic.empty()) EmitString(out, "schematic", s.schematic);
      EmitString(out, "bootId", s.boot_id);
      EmitString(out, "installed", FormatTimestamp(s.installed));
      if (s.withdrawn) out << YAML::Key << YamlWord{"withdrawn"} << YAML::Value << true;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (m.failure) {
    out << YAML::Key << YamlWord{"failure"} << YAML::Value << YAML::BeginMap;
    EmitString(out, "node", m.failure->node);
    EmitString(out, "talosTarget", m.failure->talos_target.ToString());
    EmitString(out, "message", m.failure->message);
    EmitString(out, "at", FormatTimestamp(m.failure->at));
    if (!m.failure->schematic.empty()) EmitString(out, "schematic", m.failure->schematic);
    if (!m.failure->retry.empty()) EmitString(out, "retry", m.failure->retry);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void EmitGates(YAML::Emitter& out, const GateState& g) {
  out << YAML::Key << YamlWord{"gates"} << YAML::Value << YAML::BeginMap;
  if (g.failing_since) EmitString(out, "failingSince", FormatTimestamp(*g.failing_since));
  out << YAML::Key << YamlWord{"results"} << YAML::Value << YAML::BeginSeq;
  for (const GateResult& r : g.results) {
    out << YAML::BeginMap;
    EmitString(out, "name", r.name);
    out << YAML::Key << YamlWord{"healthy"} << YAML::Value << r.healthy;
    EmitString(out, "message", r.message);
    EmitString(out, "checked", FormatTimestamp(r.checked));
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
}

void EmitNodes(YAML::Emitter& out, const std::vector<NodeStatus>& nodes) {
  out << YAML::Key << YamlWord{"nodes"} << YAML::Value << YAML::BeginSeq;
  for (const NodeStatus& n : nodes) {
    out << YAML::BeginMap;
    EmitString(out, "name", n.name);
    out << YAML::Key << YamlWord{"role"} << YAML::Value << YamlWord{n.role};
    EmitString(out, "talos", n.talos);
    EmitString(out, "kubelet", n.kubelet);
    if (!n.schematic.empty()) EmitString(out, "schematic", n.schematic);
    if (!n.boot_id.empty()) EmitString(out, "bootId", n.boot_id);
    if (n.boot_seen) EmitString(out, "bootSeen", FormatTimestamp(*n.boot_seen));
    out << YAML::Key << YamlWord{"ready"} << YAML::Value << n.ready;
    if (!n.reachable) {
      out << YAML::Key << YamlWord{"reachable"} << YAML::Value << false;
      if (n.last_seen) EmitString(out, "lastSeen", FormatTimestamp(*n.last_seen));
    }
    EmitString(out, "lastOperation", n.last_operation);
    if (n.last_upgrade_duration) {
      out << YAML::Key << YamlWord{"lastUpgradeSeconds"} << YAML::Value
          << n.last_upgrade_duration->count();
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void EmitConditionsAndHistory(YAML::Emitter& out, const ClusterStatus& s) {
  out << YAML::Key << YamlWord{"conditions"} << YAML::Value << YAML::BeginSeq;
  for (const Condition& c : s.conditions) {
    out << YAML::BeginMap;
    out << YAML::Key << YamlWord{"type"} << YAML::Value << YamlWord{c.type};
    EmitString(out, "status", c.status ? "True" : "False");
    out << YAML::Key << YamlWord{"reason"} << YAML::Value << YamlWord{c.reason};
    EmitString(out, "message", c.message);
    EmitString(out, "lastTransitionTime", FormatTimestamp(c.last_transition));
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << YamlWord{"history"} << YAML::Value << YAML::BeginSeq;
  for (const HistoryEntry& h : s.history) {
    out << YAML::Flow << YAML::BeginMap;
    EmitString(out, "at", FormatTimestamp(h.at));
    EmitString(out, "event", h.event);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

}  // namespace

std::string RenderStatusYaml(const ClusterStatus& s) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << YamlWord{"apiVersion"} << YAML::Value << std::string(kApiVersion);
  out << YAML::Key << YamlWord{"kind"} << YAML::Value << YamlWord{"ClusterStatus"};
  EmitString(out, "cluster", s.cluster);
  EmitFence(out, s.fence);
  EmitLabels(out, s.labels);
  out << YAML::Key << YamlWord{"phase"} << YAML::Value << YamlWord{ClusterPhaseName(s.phase)};
  EmitString(out, "message", s.message);
  EmitString(out, "updated", FormatTimestamp(s.updated));
  out << YAML::Key << YamlWord{"desiredCommit"} << YAML::Value << YAML::BeginMap;
  EmitString(out, "attempted", s.desired_commit_attempted);
  EmitString(out, "applied", s.desired_commit_applied);
  out << YAML::EndMap;
  EmitComponent(out, "talos", s.talos);
  EmitComponent(out, "kubernetes", s.kubernetes);
  EmitConditionsAndHistory(out, s);
  EmitNodes(out, s.nodes);
  EmitInFlight(out, s.rollout.in_flight);
  EmitRollout(out, s.rollout);
  if (!s.gates.results.empty()) EmitGates(out, s.gates);
  if (s.proposal) {  // only with one, so other files keep their shape
    out << YAML::Key << YamlWord{"proposal"} << YAML::Value << YAML::BeginMap;
    EmitString(out, "branch", s.proposal->branch);
    if (!s.proposal->talos.empty()) EmitString(out, "talos", s.proposal->talos);
    if (!s.proposal->kubernetes.empty()) EmitString(out, "kubernetes", s.proposal->kubernetes);
    if (s.proposal->pull_request > 0) {
      out << YAML::Key << YamlWord{"pullRequest"} << YAML::Value << s.proposal->pull_request;
    }
    if (!s.proposal->url.empty()) EmitString(out, "url", s.proposal->url);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::string StatusContentYaml(const ClusterStatus& status) {
  ClusterStatus undated = status;
  undated.updated = TimePoint{};
  undated.fence.reset();  // who wrote it, not what it says
  return RenderStatusYaml(undated);
}

bool SameContent(const ClusterStatus& a, const ClusterStatus& b) {
  ClusterStatus b_as_a = b;
  b_as_a.updated = a.updated;
  b_as_a.fence = a.fence;
  return a == b_as_a;
}

bool StatusChanged(const ClusterStatus& a, const ClusterStatus& b) {
  return !SameContent(a, b) && StatusContentYaml(a) != StatusContentYaml(b);
}

std::string ClusterStatusPath(std::string_view cluster) {
  return fmt::format("{}/{}.yaml", kStatusDirectory, cluster);
}

}  // namespace tr::core
