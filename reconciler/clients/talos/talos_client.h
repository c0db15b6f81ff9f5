// TalosClient: the Talos API as the reconciler uses it — one node per call, typed results, and
// absl::Status errors whose code says what to do next:
//   Unavailable        the endpoint or the node cannot be reached (rebooting, down): retry later
//   DeadlineExceeded   the call's deadline passed: retry later
//   PermissionDenied   the client certificate's role does not allow the call (or a worker was
//                      used as the endpoint: "no request forwarding"): needs new credentials
//   Unimplemented      the node's Talos version has no such method (LifecycleService < 1.13)
//   Unknown / FailedPrecondition / InvalidArgument   the node's own refusal, with its text
//                      (etcd checks, "error validating installer image", container mode, ...)
//   Cancelled          the caller's stop_token was triggered (a started stream: its handle
//                      cancelled it)
//   Aborted            a watch fell behind the node's history (an ERRORED event): list again
// Every message names the call and the node ("talos Upgrade on node 10.0.0.12 via 10.0.0.11:
// ..."). No protobuf or gRPC type appears here; see grpc_talos_client.h for the implementation.
//
// Thread-safety: implementations are safe to call from several threads at once. Streaming calls
// block the calling thread until the stream ends, the callback returns false, the timeout passes
// or the stop_token is triggered; a stream started by StartWatch or StartEvents blocks no thread: its callbacks run on
// the client's own threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/profile.h"
#include "reconciler/clients/talos/talos_types.h"

namespace tr::reconciler::talos {

// What a stream started by StartWatch or StartEvents calls. Both run on the client's threads,
// one call at a time per stream and never after `on_done`; they must not block, and must not
// destroy the stream's handle. `on_done` may run on the caller's thread before StartWatch or
// StartEvents returns (a stream that cannot start): do not start one holding a lock the
// callbacks take.
template <typename Event>
struct StreamCallbacks {
  // Every event, in the node's order.
  std::function<void(const Event&)> on_event;
  // Once, last: why the stream ended (never OK). Unavailable when the node or its endpoint went
  // down or the stream broke; Cancelled after Cancel() or the process's shutdown; the other
  // codes as above, before any event (PermissionDenied for an unknown type or namespace).
  std::function<void(const absl::Status&)> on_done;
};
using WatchCallbacks = StreamCallbacks<CosiEvent>;
using EventsCallbacks = StreamCallbacks<MachineEvent>;

// A stream in progress. Destroying it cancels the stream and waits until `on_done` has run, so
// what the callbacks use may be released right after.
class TalosStream {
 public:
  virtual ~TalosStream() = default;
  // Ends the stream soon (on_done: Cancelled unless it had already ended); returns at once.
  virtual void Cancel() = 0;
};
using CosiWatch = TalosStream;

class TalosClient {
 public:
  virtual ~TalosClient() = default;

  // MachineService/Version: the running Talos version and platform.
  virtual absl::StatusOr<NodeVersion> Version(const std::string& node) = 0;

  // The node's boot id (Read /proc/sys/kernel/random/boot_id, trimmed). Needs os:admin.
  virtual absl::StatusOr<std::string> BootId(const std::string& node) = 0;

  // The MachineStatus resource (runtime/MachineStatuses.runtime.talos.dev/machine).
  virtual absl::StatusOr<MachineStatus> GetMachineStatus(const std::string& node) = 0;

  // MachineService/ServiceList.
  virtual absl::StatusOr<std::vector<ServiceState>> ServiceList(const std::string& node) = 0;

  // MachineService/EtcdMemberList (control planes).
  virtual absl::StatusOr<std::vector<EtcdMember>> EtcdMemberList(const std::string& node) = 0;

  // MachineService/EtcdStatus of the node's member (control planes).
  virtual absl::StatusOr<EtcdMemberStatus> EtcdStatus(const std::string& node) = 0;

  // MachineService/EtcdStatus of each of `nodes`' members: by node, its status or why there is
  // none. The gRPC client asks them all in one call through one endpoint (apid's one-to-many
  // proxying, `nodes` metadata: docs/talos-api.md), which fails as a whole only when no
  // endpoint answers it or apid refuses it; a node apid could not reach, or whose member did
  // not answer, is that node's error. By default, one EtcdStatus call a node.
  using EtcdStatusOfEach = std::map<std::string, absl::StatusOr<EtcdMemberStatus>>;
  virtual absl::StatusOr<EtcdStatusOfEach> EtcdStatuses(const std::vector<std::string>& nodes) {
    EtcdStatusOfEach each;
    for (const std::string& node : nodes) each.emplace(node, EtcdStatus(node));
    return each;
  }

  // Legacy MachineService/Upgrade: validates the image and starts the upgrade sequence; the
  // node drains and reboots by itself. Returns the ack and the actor id of the sequence.
  virtual absl::StatusOr<UpgradeAck> Upgrade(const std::string& node,
                                             const LegacyUpgradeRequest& request) = 0;

  // LifecycleService/Upgrade (1.13+): writes `image` to the inactive slot; no drain, no reboot.
  // It does not pull: `image` must be in `store` under exactly that name (PullImage with the
  // same store first, in the same boot, as talosctl upgrade does), else Internal "upgrade
  // failed: installer image ... not found in containerd store". `on_progress` (may be empty)
  // sees each progress line. A non-zero installer exit code is FailedPrecondition with the last
  // progress line; Unimplemented below 1.13.
  virtual absl::StatusOr<LifecycleUpgradeResult> LifecycleUpgrade(
      const std::string& node, const std::string& image, core::InstallerStore store,
      const std::function<void(const std::string&)>& on_progress) = 0;

  // ImageService/Pull (1.13+): pulls the installer `image` into `store` (core/profile.h: the
  // CRI containerd's system namespace, kept across reboots, or the system containerd's, in
  // memory); the final name pinned to its digest. NotFound "error pulling image" when the
  // registry has no such image.
  virtual absl::StatusOr<ImagePullResult> PullImage(const std::string& node,
                                                    core::InstallerStore store,
                                                    const std::string& image) = 0;

  // Legacy MachineService/ImagePull into the CRI containerd (pre-pull for Kubernetes upgrades).
  // Below 1.13 the legacy Upgrade pulls the installer into the other (system) containerd, so
  // this proves the image exists but does not spare the Upgrade its pull.
  virtual absl::Status PullImageLegacy(const std::string& node, ContainerdNamespace ns,
                                       const std::string& image) = 0;

  // MachineService/Reboot; returns the actor id of the reboot sequence.
  virtual absl::StatusOr<std::string> Reboot(const std::string& node, RebootMode mode) = 0;

  // MachineService/EtcdForfeitLeadership (control planes): when the node's etcd member leads,
  // leadership moves to another member (upstream picks the first other one of the member list).
  // Returns that member's name, or "" when the node did not lead. Unimplemented on a worker;
  // Unknown "cannot forfeit leadership, only one member" for a cluster of one member.
  virtual absl::StatusOr<std::string> EtcdForfeitLeadership(const std::string& node) = 0;

  // MachineService/Rollback: boot the other A/B slot (the node reboots by itself).
  virtual absl::Status Rollback(const std::string& node) = 0;

  // MachineService/ApplyConfiguration.
  virtual absl::StatusOr<ApplyConfigurationResult> ApplyConfiguration(
      const std::string& node, const ApplyConfigurationRequest& request) = 0;

  // MachineService/Kubeconfig: the admin kubeconfig as the node sends it, a tar.gz holding one
  // file named `kubeconfig` (see tar_gz.h).
  virtual absl::StatusOr<std::string> Kubeconfig(const std::string& node) = 0;

  // cosi.resource.State/Get. NotFound when the resource does not exist.
  virtual absl::StatusOr<CosiResource> CosiGet(const std::string& node,
                                               const std::string& namespace_name,
                                               const std::string& type, const std::string& id) = 0;

  // cosi.resource.State/List.
  virtual absl::StatusOr<std::vector<CosiResource>> CosiList(const std::string& node,
                                                             const std::string& namespace_name,
                                                             const std::string& type) = 0;

  // cosi.resource.State/Watch, as `talosctl get --watch` does (bootstrap contents, one event per
  // message): returns at once; the events and the end arrive through `callbacks`. It holds no
  // thread while it waits. This default, for clients without streams, ends it at once with
  // Unimplemented.
  virtual std::unique_ptr<CosiWatch> StartWatch(const std::string& node,
                                                const CosiWatchRequest& request,
                                                WatchCallbacks callbacks);

  // StartWatch of the node's MachineStatus (kMachineStatusType/kMachineStatusId), each event
  // decoded: the status when the watch starts, then every change. An event that is not a
  // status arrives as an error: NotFound when the resource was destroyed (or did not exist),
  // InvalidArgument when its spec does not decode. Built on StartWatch, so a client without
  // streams ends it at once with Unimplemented.
  std::unique_ptr<TalosStream> StartMachineStatusWatch(
      const std::string& node, StreamCallbacks<absl::StatusOr<MachineStatus>> callbacks);

  // MachineService/Events. Calls `on_event` for every event, the hello message included, until
  // it returns false (then OK). When the node ends the stream (shutdown, reboot): Unavailable.
  // Holds the calling thread while the stream lasts; StartEvents holds none.
  virtual absl::Status Events(const std::string& node, const EventsRequest& request,
                              std::chrono::milliseconds timeout, std::stop_token stop,
                              const std::function<bool(const MachineEvent&)>& on_event) = 0;
  // MachineService/Events on the client's own threads, as StartWatch: returns at once; every
  // event, the hello message first, and the end arrive through `callbacks` (Unavailable when
  // the node ends the stream: shutdown, reboot; Internal for an event that cannot be read).
  // This default, for clients without streams, ends it at once with Unimplemented.
  virtual std::unique_ptr<TalosStream> StartEvents(const std::string& node,
                                                   const EventsRequest& request,
                                                   EventsCallbacks callbacks);

  // MachineService/EtcdSnapshot streamed into `path` (written to a temporary file beside it,
  // renamed when complete). Returns the number of bytes written.
  virtual absl::StatusOr<uint64_t> EtcdSnapshot(const std::string& node,
                                                const std::filesystem::path& path) = 0;
};

}  // namespace tr::reconciler::talos
