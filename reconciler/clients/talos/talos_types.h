// Typed results and requests of the Talos API client (see talos_client.h): what the reconciler
// needs from Talos nodes, free of protobuf and gRPC types. Field meanings follow
// docs/talos-api.md; enum values keep the Talos numbering where Talos has one.
//
// Values only; thread-compatible.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/observed.h"
#include "core/version.h"

namespace tr::reconciler::talos {

// MachineService/Version.
struct NodeVersion {
  std::string tag;            // exactly as reported, "v1.11.6"
  core::Version version;      // the tag parsed with core::ParseTalosVersion
  std::string sha;            // abbreviated commit
  std::string arch;           // "amd64", "arm64"
  std::string platform;       // "metal", "aws", "container", ...; empty when unknown
  std::string platform_mode;  // "metal", "cloud", "container", "metal-agent"; may be empty
};

struct UnmetCondition {
  std::string name;  // "time", "network", "services", "staticPods", "nodeReady"
  std::string reason;
};

// The MachineStatus resource (runtime/MachineStatuses.runtime.talos.dev/machine) or a
// MachineStatusEvent.
inline constexpr char kMachineStatusNamespace[] = "runtime";
inline constexpr char kMachineStatusType[] = "MachineStatuses.runtime.talos.dev";
inline constexpr char kMachineStatusId[] = "machine";

struct MachineStatus {
  core::MachineStage stage = core::MachineStage::kUnknown;
  bool ready = false;
  std::vector<UnmetCondition> unmet_conditions;
  // The resource's metadata.created ("<seconds>.<nanos>"), "" when unknown. Talos keeps its
  // resources in memory and makes this one at every boot, so two statuses with the same
  // `created` come from one boot (docs/talos-api.md).
  std::string created;

  bool RunningAndReady() const { return stage == core::MachineStage::kRunning && ready; }
};

// One entry of MachineService/ServiceList.
struct ServiceState {
  std::string id;     // "etcd", "kubelet", "apid", ...
  std::string state;  // "Running", "Finished", "Failed", ...
  bool healthy = false;
  bool health_unknown = false;  // the service has no health check
  std::string last_message;

  // Running and healthy, or running without a health check.
  bool Healthy() const { return state == "Running" && (healthy || health_unknown); }
};

struct EtcdMember {
  uint64_t id = 0;
  std::string hostname;
  std::vector<std::string> peer_urls;
  std::vector<std::string> client_urls;
  bool is_learner = false;
};

// MachineService/EtcdStatus of the node's own member.
struct EtcdMemberStatus {
  uint64_t member_id = 0;
  uint64_t leader = 0;  // member id of the leader
  std::string protocol_version;
  std::string storage_version;  // 1.11+
  int64_t db_size = 0;
  int64_t db_size_in_use = 0;
  uint64_t raft_index = 0;
  uint64_t raft_term = 0;
  uint64_t raft_applied_index = 0;
  std::vector<std::string> errors;
  bool is_learner = false;
};

// Legacy MachineService/Upgrade.
struct LegacyUpgradeRequest {
  std::string image;        // installer image reference
  bool preserve = false;    // keep EPHEMERAL (always effectively true from 1.8)
  bool stage = false;       // stage and upgrade on the next boot
  bool force = false;       // skip the etcd checks
  bool powercycle = false;  // reboot_mode POWERCYCLE instead of DEFAULT (kexec)
};

struct UpgradeAck {
  std::string ack;       // "Upgrade request received"
  std::string actor_id;  // the events of this upgrade carry it
};

// LifecycleService/Upgrade: the installer's progress lines and its exit code (0).
struct LifecycleUpgradeResult {
  std::vector<std::string> progress;
  int exit_code = 0;
};

enum class ContainerdNamespace { kSystem = 1, kCri = 2 };

// ImageService/Pull.
struct ImagePullResult {
  std::string name;          // final image name as the node resolved it
  int progress_updates = 0;  // pull_progress messages received before the name
};

enum class RebootMode { kDefault = 0, kPowercycle = 1, kForce = 2 };

enum class ApplyMode { kReboot = 0, kAuto = 1, kNoReboot = 2, kStaged = 3, kTry = 4 };

struct ApplyConfigurationRequest {
  std::string config_yaml;  // full machine config, multi-document allowed
  ApplyMode mode = ApplyMode::kNoReboot;
  bool dry_run = false;
  std::chrono::milliseconds try_timeout{0};  // kTry only; 0 = the node's default (1 min)
};

struct ApplyConfigurationResult {
  ApplyMode mode = ApplyMode::kNoReboot;  // the mode actually used
  std::string mode_details;
  std::vector<std::string> warnings;
};

// A COSI resource (cosi.resource.Resource).
struct CosiResource {
  std::string namespace_name;
  std::string type;
  std::string id;
  std::string version;  // increments on every change
  std::string owner;
  std::string phase;
  std::string created;  // metadata.created, "<seconds>.<nanos>"; "" when unset
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::string proto_spec;  // the spec message, protobuf-encoded
  std::string yaml_spec;
};

// ---- Watches (cosi.resource.State/Watch)

// What to watch: every resource of a kind (namespace and type), or the one resource `id`.
struct CosiWatchRequest {
  std::string namespace_name;
  std::string type;
  std::optional<std::string> id;
};

// The cosi EventType numbers. A kind watch starts with every resource as kCreated, then one
// kBootstrapped (its resource carries only the namespace and type); a single-resource watch starts
// with kCreated, or kDestroyed when the resource does not exist. Then each change.
enum class CosiEventType { kCreated = 0, kUpdated = 1, kDestroyed = 2, kBootstrapped = 3 };

struct CosiEvent {
  CosiEventType type = CosiEventType::kCreated;
  CosiResource resource;  // for kDestroyed: the resource as it was (or a tombstone)
  std::optional<CosiResource> old;  // kUpdated: the resource before the change
};

// ---- Events (MachineService/Events)

struct EventsRequest {
  int32_t tail_events = 0;  // 0 = only new events, N = last N, -1 = all buffered
  std::string tail_id;
  std::string with_actor_id;
};

enum class SequenceAction { kNoop = 0, kStart = 1, kStop = 2 };
enum class PhaseAction { kStart = 0, kStop = 1 };
enum class ErrorCode { kFatal = 0, kLocked = 1, kCanceled = 2 };

struct SequenceEvent {
  std::string sequence;  // "boot", "upgrade", "reboot", ...
  SequenceAction action = SequenceAction::kNoop;
  std::optional<ErrorCode> error_code;  // set when the event carries an error
  std::string error_message;
};

struct PhaseEvent {
  std::string phase;
  PhaseAction action = PhaseAction::kStart;
};

struct TaskEvent {
  std::string task;
  PhaseAction action = PhaseAction::kStart;
};

struct ServiceStateEvent {
  std::string service;
  int action = 0;  // ServiceStateEvent.Action number: 3 RUNNING, 6 FAILED, ...
  std::string message;
  bool healthy = false;
};

struct MachineStatusEvent {
  MachineStatus status;
};

struct RestartEvent {
  int64_t cmd = 0;
};

// The empty first message of every Events stream.
struct HelloEvent {};

// A payload this client does not decode; `type_url` says what it was.
struct OtherEvent {
  std::string type_url;
};

using EventPayload = std::variant<HelloEvent, SequenceEvent, PhaseEvent, TaskEvent,
                                  ServiceStateEvent, MachineStatusEvent, RestartEvent, OtherEvent>;

struct MachineEvent {
  std::string id;        // xid, sortable by time
  std::string actor_id;  // the operation that caused it; may be empty
  EventPayload payload;
};

}  // namespace tr::reconciler::talos
