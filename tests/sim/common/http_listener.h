// Runs a bound cpp-httplib server on a thread of its own, ready to be stopped.
//
// httplib's stop() does nothing until the listening loop has started (is_running()); a stop
// that comes first leaves the loop blocked in accept() for good, and joining its thread hangs
// (seen as a fleet that never stops when a test ends within milliseconds of starting it). So
// the thread is handed back only once the loop runs.
//
// Thread-safety: call once per server, from the thread that owns it.
#pragma once

#include <httplib.h>

#include <atomic>
#include <memory>
#include <thread>

namespace tr::sim {

// Starts `server->listen_after_bind()` on a new thread and waits until the server reports it is
// running (or the thread has already ended, e.g. the socket failed). The server must be bound.
inline std::thread ListenInBackground(httplib::Server* server) {
  auto ended = std::make_shared<std::atomic<bool>>(false);
  std::thread thread([server, ended] {
    server->listen_after_bind();
    *ended = true;
  });
  while (!server->is_running() && !*ended) std::this_thread::yield();
  return thread;
}

}  // namespace tr::sim
