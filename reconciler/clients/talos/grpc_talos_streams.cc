// The server-streaming calls of GrpcTalosClient (see grpc_talos_client_impl.h).
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/impl/rpc_method.h>

#include <fstream>
#include <system_error>

#include "cosi/resource/state.grpc.pb.h"
#include "machine/image.grpc.pb.h"
#include "machine/lifecycle.grpc.pb.h"
#include "machine/machine.grpc.pb.h"
#include "reconciler/clients/talos/grpc_talos_client_impl.h"
#include "reconciler/clients/talos/talos_convert.h"
#include "reconciler/runtime/private_files.h"

namespace tr::reconciler::talos {
namespace {

// Ends a stream the consumer no longer wants; the resulting CANCELLED status is not an error.
template <typename Reader>
void Abandon(CallAttempt& a, Reader& reader) {
  a.context.TryCancel();
  (void)reader.Finish();
}

// The status of a finished stream: Cancelled when `stop` ended it, Unavailable when the node
// closed a stream that should have stayed open (`open_ended`), else the gRPC outcome.
absl::Status Finished(const CallAttempt& a, const grpc::Status& status, const std::stop_token& stop,
                      bool open_ended) {
  if (stop.stop_requested()) return a.Error(absl::StatusCode::kCancelled, "cancelled");
  if (status.ok() && open_ended) {
    return a.Error(absl::StatusCode::kUnavailable, "stream ended by the node");
  }
  return a.Check(status);
}

// The containerd instance of an installer store, as talosctl upgrade --namespace spells it
// (cmd/talosctl/cmd/talos/image.go containerdInstance): "system" is the CRI containerd's system
// namespace, whose store survives a reboot; "inmem" the system containerd's, in memory.
void SetInstallerStore(core::InstallerStore store, common::ContainerdInstance& containerd) {
  containerd.set_driver(store == core::InstallerStore::kInMemory ? common::CONTAINERD
                                                                 : common::CRI);
  containerd.set_namespace_(common::NS_SYSTEM);
}

}  // namespace

absl::StatusOr<std::string> GrpcTalosClient::ReadDataStream(
    const std::string& method, const std::string& node, std::chrono::milliseconds timeout,
    const std::function<std::unique_ptr<grpc::ClientReader<common::Data>>(CallAttempt&)>& open) {
  std::string content;
  absl::Status status = Call(method, node, timeout, Failover::kReadOnly, [&](CallAttempt& a) {
    content.clear();
    auto reader = open(a);
    common::Data chunk;
    while (reader->Read(&chunk)) {
      if (auto s = CheckReplyMetadata(chunk.metadata(), a.info); !s.ok()) {
        Abandon(a, *reader);
        return s;
      }
      content += chunk.bytes();
    }
    return a.Check(reader->Finish());
  });
  if (!status.ok()) return status;
  return content;
}

absl::StatusOr<std::string> GrpcTalosClient::ReadFile(const std::string& node,
                                                      const std::string& path) {
  machine::ReadRequest request;
  request.set_path(path);
  return ReadDataStream("Read", node, options_.timeouts.read, [&](CallAttempt& a) {
    return a.stubs->machine->Read(&a.context, request);
  });
}

absl::StatusOr<std::string> GrpcTalosClient::ReadFirstChunk(const std::string& node,
                                                            const std::string& path) {
  // The generated stub offers Read only as a stream; a unary call is the same on the wire (one
  // request, then messages and a status), and gRPC's own stubs make unary calls this way.
  static const grpc::internal::RpcMethod kReadOnce("/machine.MachineService/Read",
                                                   grpc::internal::RpcMethod::NORMAL_RPC);
  machine::ReadRequest request;
  request.set_path(path);
  std::string content;
  absl::Status status =
      Call("Read", node, options_.timeouts.read, Failover::kReadOnly, [&](CallAttempt& a) {
        common::Data chunk;
        const grpc::Status done =
            grpc::internal::BlockingUnaryCall<machine::ReadRequest, common::Data>(
                a.channel.get(), kReadOnce, &a.context, request, &chunk);
        if (absl::Status s = a.Check(done); !s.ok()) return s;
        if (absl::Status s = CheckReplyMetadata(chunk.metadata(), a.info); !s.ok()) {
          return s;
        }
        content = std::move(*chunk.mutable_bytes());
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return content;
}

absl::StatusOr<std::string> GrpcTalosClient::Kubeconfig(const std::string& node) {
  return ReadDataStream("Kubeconfig", node, options_.timeouts.transfer, [&](CallAttempt& a) {
    return a.stubs->machine->Kubeconfig(&a.context, {});
  });
}

absl::StatusOr<std::vector<CosiResource>> GrpcTalosClient::CosiList(
    const std::string& node, const std::string& namespace_name, const std::string& type) {
  cosi::resource::ListRequest request;
  request.set_namespace_(namespace_name);
  request.set_type(type);
  std::vector<CosiResource> result;
  absl::Status status = Call(
      "cosi.State/List", node, options_.timeouts.read, Failover::kReadOnly, [&](CallAttempt& a) {
        result.clear();
        auto reader = a.stubs->cosi->List(&a.context, request);
        cosi::resource::ListResponse item;
        while (reader->Read(&item)) result.push_back(ToCosiResource(item.resource()));
        return a.Check(reader->Finish());
      });
  if (!status.ok()) return status;
  return result;
}

absl::Status GrpcTalosClient::Events(const std::string& node, const EventsRequest& request,
                                     std::chrono::milliseconds timeout, std::stop_token stop,
                                     const std::function<bool(const MachineEvent&)>& on_event) {
  machine::EventsRequest proto;
  proto.set_tail_events(request.tail_events);
  proto.set_tail_id(request.tail_id);
  proto.set_with_actor_id(request.with_actor_id);
  return Call(
      "Events", node, timeout, Failover::kConnectOnly,
      [&](CallAttempt& a) {
        std::stop_callback cancel(stop, [&a] { a.context.TryCancel(); });
        auto reader = a.stubs->machine->Events(&a.context, proto);
        machine::Event message;
        while (reader->Read(&message)) {
          auto event = ToMachineEvent(message);
          if (!event.ok()) {
            Abandon(a, *reader);
            return a.Error(absl::StatusCode::kInternal, std::string(event.status().message()));
          }
          if (!on_event(*event)) {
            Abandon(a, *reader);
            return absl::OkStatus();
          }
        }
        return Finished(a, reader->Finish(), stop, /*open_ended=*/true);
      },
      stop);
}

absl::StatusOr<LifecycleUpgradeResult> GrpcTalosClient::LifecycleUpgrade(
    const std::string& node, const std::string& image, core::InstallerStore store,
    const std::function<void(const std::string&)>& on_progress) {
  machine::LifecycleServiceUpgradeRequest request;
  SetInstallerStore(store, *request.mutable_containerd());
  request.mutable_source()->set_image_name(image);
  LifecycleUpgradeResult result;
  absl::Status status = Call(
      "LifecycleService/Upgrade", node, options_.timeouts.image, Failover::kConnectOnly,
      [&](CallAttempt& a) {
        auto reader = machine::LifecycleService::NewStub(a.channel)->Upgrade(&a.context, request);
        machine::LifecycleServiceUpgradeResponse response;
        std::optional<int> exit_code;
        while (reader->Read(&response)) {
          const auto& progress = response.progress();
          if (progress.response_case() == machine::LifecycleServiceInstallProgress::kMessage) {
            result.progress.push_back(progress.message());
            if (on_progress) on_progress(progress.message());
          } else if (progress.response_case() ==
                     machine::LifecycleServiceInstallProgress::kExitCode) {
            exit_code = progress.exit_code();
          }
        }
        if (auto s = a.Check(reader->Finish()); !s.ok()) return s;
        if (!exit_code) {
          return a.Error(absl::StatusCode::kUnknown, "upgrade stream ended without an exit code");
        }
        result.exit_code = *exit_code;
        if (*exit_code != 0) {
          const std::string last = result.progress.empty() ? "" : ": " + result.progress.back();
          return a.Error(absl::StatusCode::kFailedPrecondition,
                         fmt::format("installer exited with code {}{}", *exit_code, last));
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<ImagePullResult> GrpcTalosClient::PullImage(const std::string& node,
                                                           core::InstallerStore store,
                                                           const std::string& image) {
  machine::ImageServicePullRequest request;
  SetInstallerStore(store, *request.mutable_containerd());
  request.set_image_ref(image);
  ImagePullResult result;
  absl::Status status =
      Call("ImageService/Pull", node, options_.timeouts.image, Failover::kConnectOnly,
           [&](CallAttempt& a) {
             auto reader = machine::ImageService::NewStub(a.channel)->Pull(&a.context, request);
             machine::ImageServicePullResponse response;
             while (reader->Read(&response)) {
               if (response.response_case() == machine::ImageServicePullResponse::kName) {
                 result.name = response.name();
               } else if (response.has_pull_progress()) {
                 ++result.progress_updates;
               }
             }
             if (auto s = a.Check(reader->Finish()); !s.ok()) return s;
             if (result.name.empty()) {
               return a.Error(absl::StatusCode::kUnknown, "pull ended without an image name");
             }
             return absl::OkStatus();
           });
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<uint64_t> GrpcTalosClient::EtcdSnapshot(const std::string& node,
                                                       const std::filesystem::path& path) {
  std::filesystem::path partial = path;
  partial += ".part";
  uint64_t written = 0;
  absl::Status status = Call(
      "EtcdSnapshot", node, options_.timeouts.transfer, Failover::kConnectOnly,
      [&](CallAttempt& a) {
        written = 0;
        // A snapshot holds every secret of the cluster: readable by this user only.
        if (absl::Status s = CreatePrivateFile(partial); !s.ok()) {
          return a.Error(absl::StatusCode::kInternal, std::string(s.message()));
        }
        std::ofstream out(partial, std::ios::binary | std::ios::trunc);
        if (!out) {
          return a.Error(absl::StatusCode::kInternal,
                         fmt::format("cannot write {}", partial.string()));
        }
        auto reader = a.stubs->machine->EtcdSnapshot(&a.context, {});
        common::Data chunk;
        while (reader->Read(&chunk)) {
          out.write(chunk.bytes().data(), static_cast<std::streamsize>(chunk.bytes().size()));
          written += chunk.bytes().size();
        }
        if (auto s = a.Check(reader->Finish()); !s.ok()) return s;
        out.close();
        if (!out) {
          return a.Error(absl::StatusCode::kInternal,
                         fmt::format("writing {} failed", partial.string()));
        }
        return absl::OkStatus();
      });
  std::error_code error;
  if (!status.ok()) {
    std::filesystem::remove(partial, error);
    return status;
  }
  std::filesystem::rename(partial, path, error);
  if (error) {
    return absl::InternalError(
        fmt::format("renaming etcd snapshot to {}: {}", path.string(), error.message()));
  }
  return written;
}

}  // namespace tr::reconciler::talos
