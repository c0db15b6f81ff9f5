#include "tests/sim/api/grpc_poller.h"

namespace tr::sim {

GrpcPoller::GrpcPoller()
    : thread_([this] {
        void* tag = nullptr;
        bool ok = false;
        while (queue_.Next(&tag, &ok)) {
        }  // nothing is ever queued: Next returns false once the queue is shut down
      }) {}

GrpcPoller::~GrpcPoller() {
  queue_.Shutdown();
  thread_.join();
}

}  // namespace tr::sim
