// The gRPC services one simulated node serves on <address>:50000: MachineService,
// LifecycleService, ImageService and cosi.resource.State. Every handler first asks the node's
// ApidRouter who serves the call, then works on that node's state in its SimCluster, and
// journals the result. Version-gated services answer Unimplemented below Talos 1.13.
//
// Thread-safety: handlers run on gRPC's threads; all state access goes through the cluster lock.
#pragma once

#include <memory>
#include <string>

#include "cosi/resource/state.grpc.pb.h"
#include "machine/image.grpc.pb.h"
#include "machine/lifecycle.grpc.pb.h"
#include "machine/machine.grpc.pb.h"
#include "tests/sim/api/apid_router.h"

namespace tr::sim {

// Shared by the handlers: waits for a Mailbox while watching for cancellation.
// True when the call should give up (client cancelled or fleet stopping).
bool CallAbandoned(grpc::ServerContext* context, const SimCluster& cluster);

// Routes the call, runs `serve(route)` and journals its status. Routing refusals are returned
// (and journaled) by the router.
template <typename Serve>
grpc::Status HandleCall(const ApidRouter& router, grpc::ServerContext* context, const char* method,
                        Serve&& serve) {
  auto route = router.Resolve(*context, method);
  if (!route.ok()) return ToGrpc(route.status());
  grpc::Status status = serve(*route);
  JournalCall(*route, method, status);
  return status;
}

class StreamPump;

// Events is on gRPC's callback API: an open stream holds no thread (events_stream.cc); the rest
// is synchronous. `pump` is the cluster's, shared by its node servers' MachineServiceImpl and
// CosiStateImpl (stream_pump.h); without one the service has its own.
class MachineServiceImpl final
    : public machine::MachineService::WithCallbackMethod_Events<machine::MachineService::Service> {
 public:
  explicit MachineServiceImpl(ApidRouter router, std::shared_ptr<StreamPump> pump = nullptr);

  grpc::Status Version(grpc::ServerContext*, const google::protobuf::Empty*,
                       machine::VersionResponse*) override;
  grpc::Status Hostname(grpc::ServerContext*, const google::protobuf::Empty*,
                        machine::HostnameResponse*) override;
  grpc::Status Upgrade(grpc::ServerContext*, const machine::UpgradeRequest*,
                       machine::UpgradeResponse*) override;
  grpc::Status Reboot(grpc::ServerContext*, const machine::RebootRequest*,
                      machine::RebootResponse*) override;
  grpc::Status Rollback(grpc::ServerContext*, const machine::RollbackRequest*,
                        machine::RollbackResponse*) override;
  grpc::Status ApplyConfiguration(grpc::ServerContext*, const machine::ApplyConfigurationRequest*,
                                  machine::ApplyConfigurationResponse*) override;
  grpc::Status ServiceList(grpc::ServerContext*, const google::protobuf::Empty*,
                           machine::ServiceListResponse*) override;
  grpc::Status EtcdMemberList(grpc::ServerContext*, const machine::EtcdMemberListRequest*,
                              machine::EtcdMemberListResponse*) override;
  grpc::Status EtcdStatus(grpc::ServerContext*, const google::protobuf::Empty*,
                          machine::EtcdStatusResponse*) override;
  grpc::Status EtcdForfeitLeadership(grpc::ServerContext*,
                                     const machine::EtcdForfeitLeadershipRequest*,
                                     machine::EtcdForfeitLeadershipResponse*) override;
  grpc::Status EtcdSnapshot(grpc::ServerContext*, const machine::EtcdSnapshotRequest*,
                            grpc::ServerWriter<common::Data>*) override;
  grpc::ServerWriteReactor<machine::Event>* Events(grpc::CallbackServerContext*,
                                                   const machine::EventsRequest*) override;
  grpc::Status Logs(grpc::ServerContext*, const machine::LogsRequest*,
                    grpc::ServerWriter<common::Data>*) override;
  grpc::Status Read(grpc::ServerContext*, const machine::ReadRequest*,
                    grpc::ServerWriter<common::Data>*) override;
  grpc::Status Kubeconfig(grpc::ServerContext*, const google::protobuf::Empty*,
                          grpc::ServerWriter<common::Data>*) override;
  grpc::Status ImagePull(grpc::ServerContext*, const machine::ImagePullRequest*,
                         machine::ImagePullResponse*) override;

 private:
  ApidRouter router_;
  std::shared_ptr<StreamPump> pump_;
};

class LifecycleServiceImpl final : public machine::LifecycleService::Service {
 public:
  explicit LifecycleServiceImpl(ApidRouter router) : router_(std::move(router)) {}
  grpc::Status Upgrade(grpc::ServerContext*, const machine::LifecycleServiceUpgradeRequest*,
                       grpc::ServerWriter<machine::LifecycleServiceUpgradeResponse>*) override;

 private:
  ApidRouter router_;
};

class ImageServiceImpl final : public machine::ImageService::Service {
 public:
  explicit ImageServiceImpl(ApidRouter router) : router_(std::move(router)) {}
  grpc::Status Pull(grpc::ServerContext*, const machine::ImageServicePullRequest*,
                    grpc::ServerWriter<machine::ImageServicePullResponse>*) override;
  grpc::Status List(grpc::ServerContext*, const machine::ImageServiceListRequest*,
                    grpc::ServerWriter<machine::ImageServiceListResponse>*) override;

 private:
  ApidRouter router_;
};

// Get and List are synchronous; Watch is on gRPC's callback API: an open watch holds no thread,
// and the cluster's pump (started by its first stream) hands every watch what changed at each
// of the cluster's notifications (cosi_state.cc). `pump` as for MachineServiceImpl.
class CosiStateImpl final
    : public cosi::resource::State::WithCallbackMethod_Watch<cosi::resource::State::Service> {
 public:
  explicit CosiStateImpl(ApidRouter router, std::shared_ptr<StreamPump> pump = nullptr);
  grpc::Status Get(grpc::ServerContext*, const cosi::resource::GetRequest*,
                   cosi::resource::GetResponse*) override;
  grpc::Status List(grpc::ServerContext*, const cosi::resource::ListRequest*,
                    grpc::ServerWriter<cosi::resource::ListResponse>*) override;
  grpc::ServerWriteReactor<cosi::resource::WatchResponse>* Watch(
      grpc::CallbackServerContext*, const cosi::resource::WatchRequest*) override;

 private:
  ApidRouter router_;
  std::shared_ptr<StreamPump> pump_;
};

}  // namespace tr::sim
