// A thread that keeps gRPC polling the process's sockets. A node server serves Events and COSI
// Watch on the callback API and the rest synchronously; gRPC then builds it as a "hybrid"
// server whose synchronous queues do not poll (GRPC_CQ_NON_POLLING, grpc
// src/cpp/server/server_builder.cc @ v1.51.1), and the only pollers left are the two threads
// of the process's callback queue, which sleep 100 ms after a second with no callback event
// (src/cpp/common/completion_queue_cc.cc @ v1.51.1, Debian bookworm's gRPC). Both asleep, a
// unary call to any node waited up to 100 ms to be read (docs/benchmarks.md). This thread
// waits on a polling queue of its own that never gets an event: with the Linux poller (epoll1,
// one epoll set for the whole process) a thread waiting there is handed the polling of every
// socket of the process when the thread that polled leaves, so some thread always polls.
//
// Thread-safety: made and destroyed on one thread.
#pragma once

#include <thread>

#include "grpcpp/completion_queue.h"

namespace tr::sim {

class GrpcPoller {
 public:
  GrpcPoller();
  ~GrpcPoller();  // shuts the queue down and joins the thread
  GrpcPoller(const GrpcPoller&) = delete;
  GrpcPoller& operator=(const GrpcPoller&) = delete;

 private:
  grpc::CompletionQueue queue_;
  std::thread thread_;
};

}  // namespace tr::sim
