// LifecycleService/Upgrade and ImageService (Pull, List) of a simulated node: Talos 1.13+ only;
// older nodes answer UNIMPLEMENTED "unknown service ..." as a server without them does.
#include <set>

#include "fmt/format.h"
#include "tests/sim/api/node_services.h"

namespace tr::sim {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(50);

grpc::Status RequiresTalos113(const SimNode& node, const char* service) {
  if (TalosMinor(node) >= 13) return grpc::Status::OK;
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, fmt::format("unknown service {}", service));
}

}  // namespace

grpc::Status LifecycleServiceImpl::Upgrade(
    grpc::ServerContext* ctx, const machine::LifecycleServiceUpgradeRequest* request,
    grpc::ServerWriter<machine::LifecycleServiceUpgradeResponse>* writer) {
  return HandleCall(router_, ctx, "/machine.LifecycleService/Upgrade", [&](const Route& r) {
    if (auto st = RequiresTalos113(*r.target, "machine.LifecycleService"); !st.ok()) return st;
    if (r.target->spec.platform == "container") {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "upgrade is not supported in container mode");
    }
    // The lifecycle service wraps every installer error, the containerd instance's too, in
    // Internal "upgrade failed: ..." (internal/app/lifecycle/lifecycle.go).
    auto store = ContainerdStore(request->containerd().driver(), request->containerd().namespace_());
    if (!store.ok() && !request->source().image_name().empty()) {
      return grpc::Status(grpc::StatusCode::INTERNAL,
                          fmt::format("upgrade failed: rpc error: code = InvalidArgument desc = {}",
                                      std::string(store.status().message())));
    }
    auto box = r.cluster->LifecycleUpgrade(*r.target, request->source().image_name(),
                                           store.value_or(ImageStore::kCriSystem));
    if (!box.ok()) return ToGrpc(box.status());
    while (true) {
      if (CallAbandoned(ctx, *r.cluster)) return grpc::Status::CANCELLED;
      auto item = (*box)->Pop(kPoll);
      if (!item) {
        if ((*box)->Done()) return grpc::Status::OK;
        continue;
      }
      if (!item->error.ok()) return ToGrpc(item->error);
      machine::LifecycleServiceUpgradeResponse response;
      if (item->final) {
        response.mutable_progress()->set_exit_code(item->exit_code);
      } else {
        response.mutable_progress()->set_message(item->message);
      }
      if (!writer->Write(response)) return grpc::Status::CANCELLED;
    }
  });
}

grpc::Status ImageServiceImpl::Pull(grpc::ServerContext* ctx,
                                    const machine::ImageServicePullRequest* request,
                                    grpc::ServerWriter<machine::ImageServicePullResponse>* writer) {
  return HandleCall(router_, ctx, "/machine.ImageService/Pull", [&](const Route& r) {
    if (auto st = RequiresTalos113(*r.target, "machine.ImageService"); !st.ok()) return st;
    if (request->image_ref().empty()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "image reference is required");
    }
    auto store = ContainerdStore(request->containerd().driver(), request->containerd().namespace_());
    if (!store.ok()) return ToGrpc(store.status());
    auto box = r.cluster->PullImage(*r.target, request->image_ref(), *store);
    const auto started = r.cluster->scheduler().Now();
    while (true) {
      if (CallAbandoned(ctx, *r.cluster)) return grpc::Status::CANCELLED;
      auto item = box->Pop(kPoll);
      if (!item) {
        if (box->Done()) return grpc::Status::OK;
        continue;
      }
      if (!item->error.ok()) return ToGrpc(item->error);
      machine::ImageServicePullResponse response;
      if (item->final) {
        response.set_name(item->message);
      } else {
        auto* p = response.mutable_pull_progress();
        p->set_layer_id(item->layer);
        auto* lp = p->mutable_progress();
        lp->set_status(
            static_cast<machine::ImageServicePullLayerProgress::Status>(item->layer_status));
        lp->set_offset(item->offset);
        lp->set_total(item->total);
        const auto elapsed = r.cluster->scheduler().Now() - started;
        lp->mutable_elapsed()->set_seconds(
            std::chrono::duration_cast<std::chrono::seconds>(elapsed).count());
        lp->mutable_elapsed()->set_nanos(static_cast<int32_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count() % 1'000'000'000));
      }
      if (!writer->Write(response)) return grpc::Status::CANCELLED;
    }
  });
}

grpc::Status ImageServiceImpl::List(grpc::ServerContext* ctx,
                                    const machine::ImageServiceListRequest* request,
                                    grpc::ServerWriter<machine::ImageServiceListResponse>* writer) {
  return HandleCall(router_, ctx, "/machine.ImageService/List", [&](const Route& r) {
    if (auto st = RequiresTalos113(*r.target, "machine.ImageService"); !st.ok()) return st;
    auto store = ContainerdStore(request->containerd().driver(), request->containerd().namespace_());
    if (!store.ok()) return ToGrpc(store.status());
    std::vector<machine::ImageServiceListResponse> images;
    {
      std::lock_guard lock(r.cluster->mu());
      // What the node runs (kubelet in the system namespace, the rest in k8s.io) and what was
      // pulled into the store.
      std::set<std::string> names;
      if (*store != ImageStore::kSystemInMemory) {
        for (const auto& [component, image] : r.target->images) {
          if ((component == "kubelet") == (*store == ImageStore::kCriSystem)) names.insert(image);
        }
      }
      if (auto it = r.target->image_store.find(*store); it != r.target->image_store.end()) {
        names.insert(it->second.begin(), it->second.end());
      }
      for (const auto& name : names) {
        machine::ImageServiceListResponse item;
        item.set_name(name);
        auto ref = ParseImageRef(name);
        item.set_digest(ref.ok() ? ImageDigest(*ref) : name);
        item.set_size(52'428'800);
        images.push_back(std::move(item));
      }
    }
    for (const auto& item : images) {
      if (!writer->Write(item)) return grpc::Status::CANCELLED;
    }
    return grpc::Status::OK;
  });
}

}  // namespace tr::sim
