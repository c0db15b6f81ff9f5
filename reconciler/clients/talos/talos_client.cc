#include "reconciler/clients/talos/talos_client.h"

#include "reconciler/clients/talos/talos_convert.h"

namespace tr::reconciler::talos {
namespace {

// The handle of a stream that ended before StartWatch or StartEvents returned.
class EndedStream final : public TalosStream {
 public:
  void Cancel() override {}
};

// Reports `why` as the end of a stream that never started.
std::unique_ptr<TalosStream> EndedAtOnce(const std::function<void(const absl::Status&)>& on_done,
                                         const absl::Status& why) {
  if (on_done) on_done(why);
  return std::make_unique<EndedStream>();
}

}  // namespace

std::unique_ptr<CosiWatch> TalosClient::StartWatch(const std::string& node,
                                                   const CosiWatchRequest& request,
                                                   WatchCallbacks callbacks) {
  return EndedAtOnce(callbacks.on_done,
                     absl::UnimplementedError("talos cosi.State/Watch on node " + node + ": " +
                                              request.type + " cannot be watched by this client"));
}

std::unique_ptr<TalosStream> TalosClient::StartMachineStatusWatch(
    const std::string& node, StreamCallbacks<absl::StatusOr<MachineStatus>> callbacks) {
  WatchCallbacks decoded;
  decoded.on_event = [on_event = std::move(callbacks.on_event), node](const CosiEvent& event) {
    // BOOTSTRAPPED: a kind watch's marker only.
    if (!on_event || event.type == CosiEventType::kBootstrapped) return;
    if (event.type == CosiEventType::kDestroyed) {
      on_event(absl::NotFoundError("talos MachineStatus on node " + node + ": destroyed"));
      return;
    }
    absl::StatusOr<MachineStatus> status = MachineStatusFromSpec(event.resource.proto_spec);
    if (!status.ok()) {
      on_event(absl::InvalidArgumentError("talos MachineStatus on node " + node + ": " +
                                          std::string(status.status().message())));
      return;
    }
    status->created = event.resource.created;
    on_event(*std::move(status));
  };
  decoded.on_done = std::move(callbacks.on_done);
  return StartWatch(node, CosiWatchRequest{kMachineStatusNamespace, kMachineStatusType,
                                           std::string(kMachineStatusId)},
                    std::move(decoded));
}

std::unique_ptr<TalosStream> TalosClient::StartEvents(const std::string& node,
                                                      const EventsRequest& request,
                                                      EventsCallbacks callbacks) {
  (void)request;
  return EndedAtOnce(callbacks.on_done,
                     absl::UnimplementedError("talos Events on node " + node +
                                              ": this client cannot follow events"));
}

}  // namespace tr::reconciler::talos
