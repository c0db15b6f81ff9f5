#include "reconciler/clients/talos/talos_client.h"

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

std::unique_ptr<TalosStream> TalosClient::StartEvents(const std::string& node,
                                                      const EventsRequest& request,
                                                      EventsCallbacks callbacks) {
  (void)request;
  return EndedAtOnce(callbacks.on_done,
                     absl::UnimplementedError("talos Events on node " + node +
                                              ": this client cannot follow events"));
}

}  // namespace tr::reconciler::talos
