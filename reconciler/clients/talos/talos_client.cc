#include "reconciler/clients/talos/talos_client.h"

namespace tr::reconciler::talos {
namespace {

// The handle of a watch that ended before StartWatch returned.
class EndedWatch final : public CosiWatch {
 public:
  void Cancel() override {}
};

}  // namespace

std::unique_ptr<CosiWatch> TalosClient::StartWatch(const std::string& node,
                                                   const CosiWatchRequest& request,
                                                   WatchCallbacks callbacks) {
  if (callbacks.on_done) {
    callbacks.on_done(absl::UnimplementedError("talos cosi.State/Watch on node " + node + ": " +
                                               request.type + " cannot be watched by this client"));
  }
  return std::make_unique<EndedWatch>();
}

}  // namespace tr::reconciler::talos
