// Conversions between the Talos API protobuf messages and the typed values of talos_types.h.
// Internal to the gRPC client (and its tests); nothing outside reconciler/clients/talos includes
// it.
//
// Pure functions; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "cosi/resource/state.pb.h"
#include "machine/machine.pb.h"
#include "reconciler/clients/talos/talos_types.h"

namespace tr::reconciler::talos {

// "talos/runtime/machine.", the prefix of every Events payload type URL.
inline constexpr std::string_view kEventTypeUrlPrefix = "talos/runtime/machine.";

// The version tag parsed with core::ParseTalosVersion. InvalidArgument when the reply has no
// version or the tag does not parse.
absl::StatusOr<NodeVersion> ToNodeVersion(const machine::Version& message);

MachineStatus ToMachineStatus(const machine::MachineStatusEvent& event);

// Decodes the proto_spec of runtime/MachineStatuses (MachineStatusSpec). InvalidArgument when
// the bytes do not parse.
absl::StatusOr<MachineStatus> MachineStatusFromSpec(const std::string& proto_spec);

ServiceState ToServiceState(const machine::ServiceInfo& info);
EtcdMember ToEtcdMember(const machine::EtcdMember& member);
EtcdMemberStatus ToEtcdMemberStatus(const machine::EtcdMemberStatus& status);
CosiResource ToCosiResource(const cosi::resource::Resource& resource);

// A watch event of a kind the client passes on (CREATED, UPDATED, DESTROYED, BOOTSTRAPPED);
// nullopt for the others (ERRORED, which the watch handles itself, NOOP bookmarks, and kinds a
// later server may add).
std::optional<CosiEvent> ToCosiEvent(const cosi::resource::Event& event);

// Decodes an Events message by its payload type URL. An empty type URL is the hello message;
// unknown type URLs become OtherEvent. InvalidArgument when a known payload does not parse.
absl::StatusOr<MachineEvent> ToMachineEvent(const machine::Event& event);

// The boot id in `chunk`, a message of a Read of /proc/sys/kernel/random/boot_id, when the
// chunk is the whole file: one line, newline included. nullopt when it may be a part of it, or
// is not one word (then the caller reads the whole file and trims it).
std::optional<std::string> WholeBootIdLine(std::string_view chunk);

}  // namespace tr::reconciler::talos
