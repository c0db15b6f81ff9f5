#include "reconciler/clients/talos/talos_convert.h"

#include <algorithm>
#include <cctype>

#include "fmt/format.h"
#include "resource/definitions/runtime/runtime.pb.h"

namespace tr::reconciler::talos {
namespace {

core::MachineStage ToStage(int value) {
  if (value < 0 || value > static_cast<int>(core::MachineStage::kUpgrading)) {
    return core::MachineStage::kUnknown;
  }
  return static_cast<core::MachineStage>(value);
}

template <typename Payload>
absl::StatusOr<Payload> Unpack(const google::protobuf::Any& any) {
  Payload payload;
  if (!payload.ParseFromString(any.value())) {
    return absl::InvalidArgumentError(
        fmt::format("event payload {} does not parse", any.type_url()));
  }
  return payload;
}

absl::StatusOr<EventPayload> DecodePayload(const google::protobuf::Any& any) {
  const std::string& url = any.type_url();
  if (url.empty()) return HelloEvent{};
  if (url.rfind(kEventTypeUrlPrefix, 0) != 0) return OtherEvent{url};
  const std::string name = url.substr(kEventTypeUrlPrefix.size());
  if (name == "SequenceEvent") {
    auto m = Unpack<machine::SequenceEvent>(any);
    if (!m.ok()) return m.status();
    SequenceEvent out{m->sequence(), static_cast<SequenceAction>(m->action()), std::nullopt, ""};
    if (m->has_error()) {
      out.error_code = static_cast<ErrorCode>(m->error().code());
      out.error_message = m->error().message();
    }
    return out;
  }
  if (name == "PhaseEvent") {
    auto m = Unpack<machine::PhaseEvent>(any);
    if (!m.ok()) return m.status();
    return PhaseEvent{m->phase(), static_cast<PhaseAction>(m->action())};
  }
  if (name == "TaskEvent") {
    auto m = Unpack<machine::TaskEvent>(any);
    if (!m.ok()) return m.status();
    return TaskEvent{m->task(), static_cast<PhaseAction>(m->action())};
  }
  if (name == "ServiceStateEvent") {
    auto m = Unpack<machine::ServiceStateEvent>(any);
    if (!m.ok()) return m.status();
    return ServiceStateEvent{m->service(), m->action(), m->message(), m->health().healthy()};
  }
  if (name == "MachineStatusEvent") {
    auto m = Unpack<machine::MachineStatusEvent>(any);
    if (!m.ok()) return m.status();
    return MachineStatusEvent{ToMachineStatus(*m)};
  }
  if (name == "RestartEvent") {
    auto m = Unpack<machine::RestartEvent>(any);
    if (!m.ok()) return m.status();
    return RestartEvent{m->cmd()};
  }
  return OtherEvent{url};
}

}  // namespace

absl::StatusOr<NodeVersion> ToNodeVersion(const machine::Version& message) {
  if (!message.has_version()) return absl::InvalidArgumentError("reply has no version");
  auto parsed = core::ParseTalosVersion(message.version().tag());
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(fmt::format("version tag \"{}\" does not parse: {}",
                                                  message.version().tag(),
                                                  std::string(parsed.status().message())));
  }
  NodeVersion out;
  out.tag = message.version().tag();
  out.version = *parsed;
  out.sha = message.version().sha();
  out.arch = message.version().arch();
  out.platform = message.platform().name();
  out.platform_mode = message.platform().mode();
  return out;
}

MachineStatus ToMachineStatus(const machine::MachineStatusEvent& event) {
  MachineStatus out;
  out.stage = ToStage(event.stage());
  out.ready = event.status().ready();
  for (const auto& unmet : event.status().unmet_conditions()) {
    out.unmet_conditions.push_back({unmet.name(), unmet.reason()});
  }
  return out;
}

absl::StatusOr<MachineStatus> MachineStatusFromSpec(const std::string& proto_spec) {
  ::talos::resource::definitions::runtime::MachineStatusSpec spec;
  if (!spec.ParseFromString(proto_spec)) {
    return absl::InvalidArgumentError("MachineStatus spec does not parse");
  }
  MachineStatus out;
  out.stage = ToStage(spec.stage());
  out.ready = spec.status().ready();
  for (const auto& unmet : spec.status().unmet_conditions()) {
    out.unmet_conditions.push_back({unmet.name(), unmet.reason()});
  }
  return out;
}

ServiceState ToServiceState(const machine::ServiceInfo& info) {
  return ServiceState{info.id(), info.state(), info.health().healthy(), info.health().unknown(),
                      info.health().last_message()};
}

EtcdMember ToEtcdMember(const machine::EtcdMember& member) {
  EtcdMember out;
  out.id = member.id();
  out.hostname = member.hostname();
  out.peer_urls.assign(member.peer_urls().begin(), member.peer_urls().end());
  out.client_urls.assign(member.client_urls().begin(), member.client_urls().end());
  out.is_learner = member.is_learner();
  return out;
}

EtcdMemberStatus ToEtcdMemberStatus(const machine::EtcdMemberStatus& status) {
  EtcdMemberStatus out;
  out.member_id = status.member_id();
  out.leader = status.leader();
  out.protocol_version = status.protocol_version();
  out.storage_version = status.storage_version();
  out.db_size = status.db_size();
  out.db_size_in_use = status.db_size_in_use();
  out.raft_index = status.raft_index();
  out.raft_term = status.raft_term();
  out.raft_applied_index = status.raft_applied_index();
  out.errors.assign(status.errors().begin(), status.errors().end());
  out.is_learner = status.is_learner();
  return out;
}

CosiResource ToCosiResource(const cosi::resource::Resource& resource) {
  const auto& md = resource.metadata();
  CosiResource out;
  out.namespace_name = md.namespace_();
  out.type = md.type();
  out.id = md.id();
  out.version = md.version();
  out.owner = md.owner();
  out.phase = md.phase();
  if (md.has_created()) {
    out.created = fmt::format("{}.{:09d}", md.created().seconds(), md.created().nanos());
  }
  out.labels.insert(md.labels().begin(), md.labels().end());
  out.annotations.insert(md.annotations().begin(), md.annotations().end());
  out.proto_spec = resource.spec().proto_spec();
  out.yaml_spec = resource.spec().yaml_spec();
  return out;
}

std::optional<CosiEvent> ToCosiEvent(const cosi::resource::Event& event) {
  CosiEvent out;
  switch (event.event_type()) {
    case cosi::resource::CREATED:
      out.type = CosiEventType::kCreated;
      break;
    case cosi::resource::UPDATED:
      out.type = CosiEventType::kUpdated;
      break;
    case cosi::resource::DESTROYED:
      out.type = CosiEventType::kDestroyed;
      break;
    case cosi::resource::BOOTSTRAPPED:
      out.type = CosiEventType::kBootstrapped;
      break;
    default:
      return std::nullopt;
  }
  out.resource = ToCosiResource(event.resource());
  if (event.has_old()) out.old = ToCosiResource(event.old());
  return out;
}

absl::StatusOr<MachineEvent> ToMachineEvent(const machine::Event& event) {
  auto payload = DecodePayload(event.data());
  if (!payload.ok()) return payload.status();
  return MachineEvent{event.id(), event.actor_id(), *std::move(payload)};
}

std::optional<std::string> WholeBootIdLine(std::string_view chunk) {
  const size_t newline = chunk.find('\n');
  if (newline == std::string_view::npos || newline + 1 != chunk.size()) return std::nullopt;
  const std::string_view id = chunk.substr(0, newline);
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  if (id.empty() || std::any_of(id.begin(), id.end(), space)) return std::nullopt;
  return std::string(id);
}

}  // namespace tr::reconciler::talos
