#include "core/status_yaml.h"

#include "core/api_version.h"
#include "core/timestamp.h"
#include "core/yaml_writer.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

void WriteComponent(YamlWriter& out, const char* key, const ComponentStatus& c) {
  out.BeginMap(key);
  out.String("current", c.current);
  out.String("target", c.target);
  out.String("available", c.available);
  out.Plain("status", ComponentStateName(c.state));
  out.String("message", c.message);
  out.String("progress", c.progress);
  // Only for a profile with a schematic, so other files keep their shape.
  if (!c.schematic_target.empty()) {
    out.BeginMap("schematic");
    out.String("current", c.schematic_current);
    out.String("target", c.schematic_target);
    out.EndMap();
  }
  out.EndMap();
}

void WriteInFlight(YamlWriter& out, const std::vector<OperationInFlight>& ops) {
  out.BeginSeq("inFlight", ops.empty());
  for (const OperationInFlight& op : ops) {
    out.BeginItem();
    out.String("node", op.node);
    out.String("target", op.target.ToString());
    out.String("image", op.image);
    // Only for a profile with a schematic, so other files keep their shape.
    if (!op.schematic.empty()) out.String("schematic", op.schematic);
    out.Plain("path", op.lifecycle ? "lifecycle" : "legacy");
    out.String("bootIdBefore", op.boot_id_before);
    out.String("actorId", op.actor_id);
    out.Plain("phase", OperationPhaseName(op.phase));
    out.String("started", FormatTimestamp(op.started));
    out.String("deadline", FormatTimestamp(op.deadline));
    out.EndItem();
  }
  out.EndSeq();
}

void WriteStaged(YamlWriter& out, const std::vector<StagedInstall>& staged) {
  out.BeginSeq("staged", false);
  for (const StagedInstall& s : staged) {
    out.BeginItem();
    out.String("node", s.node);
    out.String("target", s.target.ToString());
    out.String("image", s.image);
    if (!s.schematic.empty()) out.String("schematic", s.schematic);
    out.String("bootId", s.boot_id);
    out.String("installed", FormatTimestamp(s.installed));
    if (s.withdrawn) out.Bool("withdrawn", true);
    out.EndItem();
  }
  out.EndSeq();
}

void WriteRollout(YamlWriter& out, const RolloutMemory& m) {
  out.BeginMap("rollout");
  out.String("prepulledImage", m.prepulled_image);
  if (!m.prepulled_node_images.empty()) {  // only with per-node schematics: others keep their shape
    out.BeginSeq("prepulledNodeImages", false);
    for (const std::string& image : m.prepulled_node_images) out.StringItem(image);
    out.EndSeq();
  }
  out.String("etcdSnapshotImage", m.etcd_snapshot_image);
  if (m.settle_until) out.String("settleUntil", FormatTimestamp(*m.settle_until));
  // Only with policy.install: ahead: other files keep their shape.
  if (!m.staged.empty()) WriteStaged(out, m.staged);
  if (m.failure) {
    out.BeginMap("failure");
    out.String("node", m.failure->node);
    out.String("talosTarget", m.failure->talos_target.ToString());
    out.String("message", m.failure->message);
    out.String("at", FormatTimestamp(m.failure->at));
    if (!m.failure->schematic.empty()) out.String("schematic", m.failure->schematic);
    if (!m.failure->retry.empty()) out.String("retry", m.failure->retry);
    out.EndMap();
  }
  out.EndMap();
}

void WriteGates(YamlWriter& out, const GateState& g) {
  out.BeginMap("gates");
  if (g.failing_since) out.String("failingSince", FormatTimestamp(*g.failing_since));
  out.BeginSeq("results", g.results.empty());
  for (const GateResult& r : g.results) {
    out.BeginItem();
    out.String("name", r.name);
    out.Bool("healthy", r.healthy);
    out.String("message", r.message);
    out.String("checked", FormatTimestamp(r.checked));
    out.EndItem();
  }
  out.EndSeq();
  out.EndMap();
}

void WriteNodes(YamlWriter& out, const std::vector<NodeStatus>& nodes) {
  out.BeginSeq("nodes", nodes.empty());
  for (const NodeStatus& n : nodes) {
    out.BeginItem();
    out.String("name", n.name);
    out.Word("role", n.role);
    out.String("talos", n.talos);
    out.String("kubelet", n.kubelet);
    if (!n.schematic.empty()) out.String("schematic", n.schematic);
    if (!n.boot_id.empty()) out.String("bootId", n.boot_id);
    if (n.boot_seen) out.String("bootSeen", FormatTimestamp(*n.boot_seen));
    out.Bool("ready", n.ready);
    if (!n.reachable) {
      out.Bool("reachable", false);
      if (n.last_seen) out.String("lastSeen", FormatTimestamp(*n.last_seen));
    }
    out.String("lastOperation", n.last_operation);
    if (n.last_upgrade_duration) {
      out.Number("lastUpgradeSeconds", static_cast<int64_t>(n.last_upgrade_duration->count()));
    }
    out.EndItem();
  }
  out.EndSeq();
}

void WriteConditionsAndHistory(YamlWriter& out, const ClusterStatus& s) {
  out.BeginSeq("conditions", s.conditions.empty());
  for (const Condition& c : s.conditions) {
    out.BeginItem();
    out.Word("type", c.type);
    out.String("status", c.status ? "True" : "False");
    out.Word("reason", c.reason);
    out.String("message", c.message);
    out.String("lastTransitionTime", FormatTimestamp(c.last_transition));
    out.EndItem();
  }
  out.EndSeq();
  out.BeginSeq("history", s.history.empty());
  for (const HistoryEntry& h : s.history) {
    out.FlowItem(FlowMap().String("at", FormatTimestamp(h.at)).String("event", h.event).Take());
  }
  out.EndSeq();
}

}  // namespace

std::string RenderStatusYaml(const ClusterStatus& s) {
  YamlWriter out;
  out.Plain("apiVersion", kApiVersion);
  out.Plain("kind", "ClusterStatus");
  out.String("cluster", s.cluster);
  // Written only with leader election (a record without a fence keeps the file's earlier shape).
  if (s.fence) {
    out.Flow("fence", FlowMap()
                          .Number("generation", s.fence->generation)
                          .String("holder", s.fence->holder)
                          .Take());
  }
  // Written only when there are labels, so a cluster without any keeps the file's earlier shape.
  if (!s.labels.empty()) {
    out.BeginMap("labels");
    for (const auto& [key, value] : s.labels) out.String(key, value);
    out.EndMap();
  }
  out.Plain("phase", ClusterPhaseName(s.phase));
  out.String("message", s.message);
  out.String("updated", FormatTimestamp(s.updated));
  out.BeginMap("desiredCommit");
  out.String("attempted", s.desired_commit_attempted);
  out.String("applied", s.desired_commit_applied);
  out.EndMap();
  WriteComponent(out, "talos", s.talos);
  WriteComponent(out, "kubernetes", s.kubernetes);
  WriteConditionsAndHistory(out, s);
  WriteNodes(out, s.nodes);
  WriteInFlight(out, s.rollout.in_flight);
  WriteRollout(out, s.rollout);
  if (!s.gates.results.empty()) WriteGates(out, s.gates);
  if (s.proposal) {  // only with one, so other files keep their shape
    out.BeginMap("proposal");
    out.String("branch", s.proposal->branch);
    if (!s.proposal->talos.empty()) out.String("talos", s.proposal->talos);
    if (!s.proposal->kubernetes.empty()) out.String("kubernetes", s.proposal->kubernetes);
    if (s.proposal->pull_request > 0) out.Number("pullRequest", s.proposal->pull_request);
    if (!s.proposal->url.empty()) out.String("url", s.proposal->url);
    out.EndMap();
  }
  return out.Take();
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
