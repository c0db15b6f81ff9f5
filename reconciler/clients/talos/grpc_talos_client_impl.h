// GrpcTalosClient, the class behind NewGrpcTalosClient (grpc_talos_client.h). Internal: its
// methods are split over grpc_talos_client.cc (routing, unary calls), grpc_talos_streams.cc
// (server-streaming calls) and grpc_talos_watch.cc (started streams: watches and
// events, asynchronous readers on the process's one stream queue).
//
// Thread-safety: safe from several threads; the only mutable state is where calls start (the
// preferred endpoint, and the next endpoint of each node the last one could not dial).
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "reconciler/clients/talos/grpc_call.h"
#include "reconciler/clients/talos/grpc_talos_client.h"

namespace tr::reconciler::talos {

// The arguments of every channel to an endpoint: the message size, reconnect backoff and idle
// timeout of `options`, and a fixed receive window of kStreamWindowBytes instead of gRPC's BDP
// probe (grpc_talos_client.cc says why).
inline constexpr int kStreamWindowBytes = 4 << 20;
grpc::ChannelArguments TalosChannelArguments(const GrpcTalosClientOptions& options);

class GrpcTalosClient final : public TalosClient {
 public:
  GrpcTalosClient(std::vector<Endpoint> endpoints,
                  std::vector<std::shared_ptr<grpc::Channel>> channels,
                  GrpcTalosClientOptions options, Env& env);

  absl::StatusOr<NodeVersion> Version(const std::string& node) override;
  absl::StatusOr<std::string> BootId(const std::string& node) override;
  absl::StatusOr<MachineStatus> GetMachineStatus(const std::string& node) override;
  absl::StatusOr<std::vector<ServiceState>> ServiceList(const std::string& node) override;
  absl::StatusOr<std::vector<EtcdMember>> EtcdMemberList(const std::string& node) override;
  absl::StatusOr<EtcdMemberStatus> EtcdStatus(const std::string& node) override;
  absl::StatusOr<EtcdStatusOfEach> EtcdStatuses(const std::vector<std::string>& nodes) override;
  absl::StatusOr<UpgradeAck> Upgrade(const std::string& node,
                                     const LegacyUpgradeRequest& request) override;
  absl::StatusOr<LifecycleUpgradeResult> LifecycleUpgrade(
      const std::string& node, const std::string& image, core::InstallerStore store,
      const std::function<void(const std::string&)>& on_progress) override;
  absl::StatusOr<ImagePullResult> PullImage(const std::string& node, core::InstallerStore store,
                                            const std::string& image) override;
  absl::Status PullImageLegacy(const std::string& node, ContainerdNamespace ns,
                               const std::string& image) override;
  absl::StatusOr<std::string> Reboot(const std::string& node, RebootMode mode) override;
  absl::StatusOr<std::string> EtcdForfeitLeadership(const std::string& node) override;
  absl::Status Rollback(const std::string& node) override;
  absl::StatusOr<ApplyConfigurationResult> ApplyConfiguration(
      const std::string& node, const ApplyConfigurationRequest& request) override;
  absl::StatusOr<std::string> Kubeconfig(const std::string& node) override;
  absl::StatusOr<CosiResource> CosiGet(const std::string& node, const std::string& namespace_name,
                                       const std::string& type, const std::string& id) override;
  absl::StatusOr<std::vector<CosiResource>> CosiList(const std::string& node,
                                                     const std::string& namespace_name,
                                                     const std::string& type) override;
  std::unique_ptr<CosiWatch> StartWatch(const std::string& node, const CosiWatchRequest& request,
                                        WatchCallbacks callbacks) override;
  absl::Status Events(const std::string& node, const EventsRequest& request,
                      std::chrono::milliseconds timeout, std::stop_token stop,
                      const std::function<bool(const MachineEvent&)>& on_event) override;
  std::unique_ptr<TalosStream> StartEvents(const std::string& node, const EventsRequest& request,
                                           EventsCallbacks callbacks) override;
  absl::StatusOr<uint64_t> EtcdSnapshot(const std::string& node,
                                        const std::filesystem::path& path) override;

  // How many endpoints hold a connection now; none once the client has been idle for
  // `idle_timeout`.
  size_t ConnectedEndpoints() const;

 private:
  // MachineService/Read: a whole file from the node (BootId reads one). Needs os:admin.
  absl::StatusOr<std::string> ReadFile(const std::string& node, const std::string& path);
  // The first message of a Read of `path`, asked as a unary call: one batch (request, half-close,
  // one message, status) where the stream waits four times. Talos sends a file in 1 KiB
  // chunks, so a shorter file is its only message. A reply of more messages is not read: gRPC
  // 1.51 then ends the call DeadlineExceeded (its status waits for the unread messages).
  absl::StatusOr<std::string> ReadFirstChunk(const std::string& node, const std::string& path);
  // Whether a call may be sent again through another endpoint after the endpoint's connection
  // broke during the call (read-only calls), or only when no connection could be made.
  enum class Failover { kConnectOnly, kReadOnly };
  using Attempt = std::function<absl::Status(CallAttempt&)>;

  // Runs `attempt` through the endpoints for `node` (see grpc_talos_client.h, Routing) within
  // `timeout`; returns its status, or Unavailable / DeadlineExceeded when no endpoint connects.
  // With `fanout`, the call is proxied to each of those nodes (`nodes` metadata), and `node`
  // only names the call (its errors, the endpoint it prefers).
  absl::Status Call(const std::string& method, const std::string& node,
                    std::chrono::milliseconds timeout, Failover failover, const Attempt& attempt,
                    std::stop_token stop = {}, const std::vector<std::string>& fanout = {});
  // Endpoint indices for a call to `node`: endpoints other than the node first (the node's own
  // start when an endpoint could not dial it, else the preferred one, first), the node itself
  // only when it is the only endpoint. With `node_first` (a COSI watch), the node itself first
  // when it is an endpoint, then the others.
  std::vector<size_t> Candidates(const std::string& node, bool node_first = false) const;
  // Whether `status`, from a call through `endpoint`, says that its apid could not dial the node
  // behind it (another host than its own; talos_answers.h).
  bool NodeBehindUnreachable(const absl::Status& status, size_t endpoint) const;
  // Makes the candidate after `candidates[position]` the one tried first by the next call for
  // `node` (its endpoint could not dial it). Calls for the other nodes keep their endpoint.
  void StartNextAt(const std::string& node, const std::vector<size_t>& candidates, size_t position);
  // A call for `node` through `endpoint` was answered: the node's calls start at the preferred
  // endpoint again when they had moved (StartNextAt); else `endpoint` becomes the preferred one.
  void Answered(const std::string& node, size_t endpoint);
  // Makes the endpoint of `leader`, the node whose etcd member leads, the preferred one when it
  // is an endpoint: a rollout reboots the leader last (control planes one at a time, the leader
  // last), so calls and the watches of nodes that are not endpoints started through it last
  // through every other control plane's reboot. Nothing for "" or a node that is no endpoint.
  void PreferLeader(const std::string& leader);
  // Waits for the channel to connect until `deadline` or `stop`; kRefused at once when the
  // connection attempt fails (refused, TLS handshake failure) or recently failed.
  enum class Connection { kReady, kRefused, kNoAnswer };
  Connection Connect(grpc::Channel& channel, std::chrono::system_clock::time_point deadline,
                     const std::stop_token& stop);
  // Reads a stream of common.Data into one string (Read, Kubeconfig, Logs).
  absl::StatusOr<std::string> ReadDataStream(
      const std::string& method, const std::string& node, std::chrono::milliseconds timeout,
      const std::function<std::unique_ptr<grpc::ClientReader<common::Data>>(CallAttempt&)>& open);

  // One attempt of a started stream of a kind (grpc_talos_watch.cc).
  template <typename Kind>
  class StreamAttempt;

  std::vector<Endpoint> endpoints_;
  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  std::vector<ChannelStubs> stubs_;  // by channel
  GrpcTalosClientOptions options_;
  Env& env_;
  std::atomic<size_t> preferred_{0};
  // Where the next call for a node starts after an endpoint could not dial it (the node is down
  // or coming up): per node, so that a node's reboot does not move every other node's calls and
  // watches to an endpoint that may be the next to reboot. Erased at the node's first answer.
  mutable Mutex moved_mu_;
  std::map<std::string, size_t> moved_ ABSL_GUARDED_BY(moved_mu_);
  // Set once a boot id read as one message timed out: from then on it is read as a stream.
  std::atomic<bool> boot_id_as_stream_{false};
};

}  // namespace tr::reconciler::talos
