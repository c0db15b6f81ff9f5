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

// A one-to-many call (`nodes` metadata) as apid proxies it: `serve(route, part)` for each
// target, their messages merged into `response` in the targets' order, each with its target's
// metadata.hostname (backend/apid.go AppendInfo), and a target that could not be dialled or
// failed as one message carrying only metadata.hostname, .error and .status (BuildError); the
// call itself succeeds (grpc-proxy handler_one2many.go). Refusals of the whole call are the
// router's.
template <typename Response, typename Serve>
grpc::Status HandleOneToMany(const ApidRouter& router, grpc::ServerContext* context,
                             const char* method, Response* response, Serve&& serve) {
  absl::StatusOr<Fanout> fanout = router.ResolveMany(*context, method);
  if (!fanout.ok()) return ToGrpc(fanout.status());
  if (!fanout->aggregate) {
    const Route& local = *fanout->targets.front().route;
    grpc::Status status = serve(local, response);
    JournalCall(local, method, status);
    return status;
  }
  JournalFanout(router, method, *fanout);
  for (const FanoutTarget& target : fanout->targets) {
    Response part;
    const grpc::Status status =
        target.route.ok() ? serve(*target.route, &part) : ToGrpc(target.route.status());
    JournalFanoutPart(router, *fanout, target, method, status);
    if (!status.ok()) {
      common::Metadata* metadata = response->add_messages()->mutable_metadata();
      metadata->set_hostname(target.target);
      metadata->set_error(GoStatusText(status));
      metadata->mutable_status()->set_code(static_cast<int>(status.error_code()));
      metadata->mutable_status()->set_message(status.error_message());
      continue;
    }
    for (auto& message : *part.mutable_messages()) {
      message.mutable_metadata()->set_hostname(target.target);
      response->add_messages()->Swap(&message);
    }
  }
  return grpc::Status::OK;
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
