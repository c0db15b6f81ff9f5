#include "core/status_decode.h"

#include <algorithm>
#include <limits>

#include "core/profile_decode.h"
#include "core/strict_yaml.h"
#include "core/yaml_decode.h"

namespace tr::core {
namespace {

std::string Str(const Field& f) { return ReadString(f).value_or(""); }

std::optional<TimePoint> Time(const Field& f) {
  std::optional<std::string> text = ReadString(f);
  if (!text) return std::nullopt;
  absl::StatusOr<TimePoint> t = ParseTimestamp(*text);
  if (!t.ok()) {
    f.Error(std::string(t.status().message()));
    return std::nullopt;
  }
  return *t;
}

template <typename E>
E Named(const Field& f, E fallback, std::initializer_list<E> all, const char* (*name)(E)) {
  std::optional<std::string> text = ReadString(f);
  if (!text) return fallback;
  for (E e : all) {
    if (*text == name(e)) return e;
  }
  f.Error("unknown value \"" + *text + "\"");
  return fallback;
}

ComponentStatus ReadComponent(const Field& f) {
  MappingReader m(f,
                  {"current", "target", "available", "status", "message", "progress", "schematic"});
  ComponentStatus c;
  c.current = Str(m.Optional("current"));
  c.target = Str(m.Optional("target"));
  c.available = Str(m.Optional("available"));
  c.state = Named(m.Required("status"), ComponentState::kIdle,
                  {ComponentState::kIdle, ComponentState::kInProgress, ComponentState::kCompleted,
                   ComponentState::kFailed, ComponentState::kBlocked},
                  ComponentStateName);
  c.message = Str(m.Optional("message"));
  c.progress = Str(m.Optional("progress"));
  if (Field schematic = m.Optional("schematic"); schematic.present()) {
    MappingReader s(schematic, {"current", "target"});
    c.schematic_current = Str(s.Optional("current"));
    c.schematic_target = Str(s.Optional("target"));
  }
  return c;
}

std::vector<Condition> ReadConditions(const Field& f) {
  std::vector<Condition> out;
  for (const Field& item : ReadList(f)) {
    MappingReader m(item, {"type", "status", "reason", "message", "lastTransitionTime"});
    Condition c;
    c.type = Str(m.Required("type"));
    c.status = Str(m.Required("status")) == "True";
    c.reason = Str(m.Optional("reason"));
    c.message = Str(m.Optional("message"));
    c.last_transition = Time(m.Required("lastTransitionTime")).value_or(TimePoint{});
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<NodeStatus> ReadNodes(const Field& f) {
  std::vector<NodeStatus> out;
  for (const Field& item : ReadList(f)) {
    MappingReader m(item, {"name", "role", "talos", "kubelet", "schematic", "bootId", "bootSeen",
                           "ready", "reachable", "lastSeen", "lastOperation",
                           "lastUpgradeSeconds"});
    NodeStatus n;
    n.name = Str(m.Required("name"));
    n.role = Str(m.Optional("role"));
    n.talos = Str(m.Optional("talos"));
    n.kubelet = Str(m.Optional("kubelet"));
    n.schematic = Str(m.Optional("schematic"));
    n.boot_id = Str(m.Optional("bootId"));
    if (Field boot_seen = m.Optional("bootSeen"); boot_seen.present()) n.boot_seen = Time(boot_seen);
    n.ready = ReadBool(m.Optional("ready")).value_or(false);
    n.reachable = ReadBool(m.Optional("reachable")).value_or(true);
    if (Field last_seen = m.Optional("lastSeen"); last_seen.present()) {
      n.last_seen = Time(last_seen);
    }
    n.last_operation = Str(m.Optional("lastOperation"));
    if (auto s = ReadInteger(m.Optional("lastUpgradeSeconds"), 0, INT32_MAX)) {
      n.last_upgrade_duration = std::chrono::seconds(*s);
    }
    out.push_back(std::move(n));
  }
  return out;
}

std::vector<OperationInFlight> ReadInFlight(const Field& f) {
  std::vector<OperationInFlight> out;
  for (const Field& item : ReadList(f)) {
    MappingReader m(item, {"node", "target", "image", "schematic", "path", "bootIdBefore",
                           "actorId", "phase", "started", "deadline"});
    OperationInFlight op;
    op.node = Str(m.Required("node"));
    op.target = ReadTalosVersion(m.Required("target")).value_or(Version{});
    op.image = Str(m.Required("image"));
    op.schematic = Str(m.Optional("schematic"));
    op.lifecycle = Str(m.Required("path")) == "lifecycle";
    op.boot_id_before = Str(m.Optional("bootIdBefore"));
    op.actor_id = Str(m.Optional("actorId"));
    op.phase =
        Named(m.Required("phase"), OperationPhase::kRecorded,
              {OperationPhase::kRecorded, OperationPhase::kUpgradeCalled,
               OperationPhase::kInstalled, OperationPhase::kDrained, OperationPhase::kRebootCalled},
              OperationPhaseName);
    op.started = Time(m.Required("started")).value_or(TimePoint{});
    op.deadline = Time(m.Required("deadline")).value_or(TimePoint{});
    out.push_back(std::move(op));
  }
  return out;
}

std::vector<StagedInstall> ReadStaged(const Field& f) {
  std::vector<StagedInstall> out;
  for (const Field& item : ReadList(f)) {
    MappingReader m(item,
                    {"node", "target", "image", "schematic", "bootId", "installed", "withdrawn"});
    StagedInstall s;
    s.node = Str(m.Required("node"));
    s.target = ReadTalosVersion(m.Required("target")).value_or(Version{});
    s.image = Str(m.Required("image"));
    s.schematic = Str(m.Optional("schematic"));
    s.boot_id = Str(m.Optional("bootId"));
    s.installed = Time(m.Required("installed")).value_or(TimePoint{});
    s.withdrawn = ReadBool(m.Optional("withdrawn")).value_or(false);
    out.push_back(std::move(s));
  }
  return out;
}

void ReadRollout(const Field& f, RolloutMemory& memory) {
  MappingReader m(f, {"prepulledImage", "prepulledNodeImages", "etcdSnapshotImage", "settleUntil",
                      "staged", "failure"});
  memory.prepulled_image = Str(m.Optional("prepulledImage"));
  for (const Field& image : ReadList(m.Optional("prepulledNodeImages"))) {
    memory.prepulled_node_images.push_back(Str(image));
  }
  memory.etcd_snapshot_image = Str(m.Optional("etcdSnapshotImage"));
  if (Field settle = m.Optional("settleUntil"); settle.present())
    memory.settle_until = Time(settle);
  memory.staged = ReadStaged(m.Optional("staged"));
  if (Field failure = m.Optional("failure"); failure.present()) {
    MappingReader fm(failure, {"node", "talosTarget", "message", "at", "schematic", "retry"});
    memory.failure = RolloutFailure{
        Str(fm.Required("node")), ReadTalosVersion(fm.Required("talosTarget")).value_or(Version{}),
        Str(fm.Required("message")), Time(fm.Required("at")).value_or(TimePoint{}),
        Str(fm.Optional("schematic")), Str(fm.Optional("retry"))};
  }
}

GateState ReadGates(const Field& f) {
  GateState g;
  if (!f.present()) return g;
  MappingReader m(f, {"failingSince", "results"});
  if (Field since = m.Optional("failingSince"); since.present()) g.failing_since = Time(since);
  for (const Field& item : ReadList(m.Optional("results"))) {
    MappingReader r(item, {"name", "healthy", "message", "checked"});
    g.results.push_back({Str(r.Required("name")), ReadBool(r.Required("healthy")).value_or(false),
                         Str(r.Optional("message")),
                         Time(r.Required("checked")).value_or(TimePoint{})});
  }
  return g;
}

absl::Status CheckFenceHolder(std::string_view holder) {
  if (holder.empty() || holder.size() > 253) return absl::InvalidArgumentError("1 to 253 characters");
  for (char c : holder) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return absl::InvalidArgumentError("no control characters");
    }
  }
  return absl::OkStatus();
}

// A generation beyond kMaxFenceGeneration was never written by a replica (claims stop at the
// ceiling): the fence is left out and the rest of the status read, so such a file can neither
// fence the cluster for ever nor make a replica forget its operation in flight.
bool LongerThanAnyGeneration(const Field& f) {
  if (!f.present() || !f.node->IsScalar() || !f.node->plain) return false;
  const std::string& text = f.node->text;
  return text.size() > 16 && text[0] != '0' &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<Fence> ReadFence(const Field& f) {
  if (!f.present()) return std::nullopt;
  // The one part read strictly: a fence with a key this build does not know is one it cannot
  // honour (FenceTest), and a newer fence that older builds could misread changes apiVersion.
  f.ctx->IgnoreUnknownKeys(false);
  MappingReader m(f, {"generation", "holder"});
  f.ctx->IgnoreUnknownKeys(true);
  const Field generation_field = m.Required("generation");
  if (LongerThanAnyGeneration(generation_field)) return std::nullopt;
  Fence fence;
  const std::optional<int64_t> generation =
      ReadInteger(generation_field, 1, std::numeric_limits<int64_t>::max());
  fence.generation = static_cast<uint64_t>(generation.value_or(1));
  fence.holder = ReadChecked(m.Required("holder"), CheckFenceHolder).value_or("");
  if (fence.generation > kMaxFenceGeneration) return std::nullopt;
  return fence;
}

std::vector<HistoryEntry> ReadHistory(const Field& f) {
  std::vector<HistoryEntry> out;
  for (const Field& item : ReadList(f)) {
    MappingReader m(item, {"at", "event"});
    out.push_back({Time(m.Required("at")).value_or(TimePoint{}), Str(m.Required("event"))});
  }
  return out;
}

}  // namespace

Decoded<ClusterStatus> DecodeClusterStatus(std::string_view path, std::string_view content) {
  return DecodeYamlDocument<ClusterStatus>(path, content, [](const Field& root) {
    // A newer build may have written fields this one does not know (a `helm rollback`, or two
    // versions side by side in a rolling update): they are left, never a reason to forget the
    // cluster. A newer shape that this build could misread changes the apiVersion instead.
    root.ctx->IgnoreUnknownKeys();
    MappingReader top(root, {"apiVersion", "kind", "cluster", "fence", "labels", "phase", "message",
                             "updated", "desiredCommit", "talos", "kubernetes", "conditions",
                             "history", "nodes", "inFlight", "rollout", "gates", "proposal"});
    CheckHeader(top, kApiVersion, "ClusterStatus");
    ClusterStatus s;
    s.cluster = Str(top.Required("cluster"));
    s.fence = ReadFence(top.Optional("fence"));
    // Checked as a profile's are: anyone who can push to the status branch writes these, and
    // they reach the notifications. Files written before labels existed have none.
    s.labels = ReadLabels(top.Optional("labels"));
    s.phase = Named(top.Required("phase"), ClusterPhase::kBlocked,
                    {ClusterPhase::kReady, ClusterPhase::kUpgradingTalos,
                     ClusterPhase::kUpgradingKubernetes, ClusterPhase::kUpgradeFailed,
                     ClusterPhase::kBlocked, ClusterPhase::kPaused, ClusterPhase::kWaitingForWindow,
                     ClusterPhase::kWaitingForGate, ClusterPhase::kWaitingForPromotion},
                    ClusterPhaseName);
    s.message = Str(top.Optional("message"));
    s.updated = Time(top.Required("updated")).value_or(TimePoint{});
    MappingReader commit(top.Required("desiredCommit"), {"attempted", "applied"});
    s.desired_commit_attempted = Str(commit.Optional("attempted"));
    s.desired_commit_applied = Str(commit.Optional("applied"));
    s.talos = ReadComponent(top.Required("talos"));
    s.kubernetes = ReadComponent(top.Required("kubernetes"));
    s.conditions = ReadConditions(top.Optional("conditions"));
    s.history = ReadHistory(top.Optional("history"));
    s.nodes = ReadNodes(top.Optional("nodes"));
    s.rollout.in_flight = ReadInFlight(top.Optional("inFlight"));
    ReadRollout(top.Required("rollout"), s.rollout);
    s.gates = ReadGates(top.Optional("gates"));
    if (Field proposal = top.Optional("proposal"); proposal.present()) {
      MappingReader p(proposal, {"branch", "talos", "kubernetes", "pullRequest", "url"});
      s.proposal = ProposalRef{.branch = Str(p.Required("branch")),
                               .talos = Str(p.Optional("talos")),
                               .kubernetes = Str(p.Optional("kubernetes")),
                               .pull_request = ReadInteger(p.Optional("pullRequest"), 1,
                                                           int64_t{1} << 53)
                                                   .value_or(0),
                               .url = Str(p.Optional("url"))};
    }
    return s;
  });
}

}  // namespace tr::core
