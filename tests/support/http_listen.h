// Runs a bound cpp-httplib server of a test on a thread of its own, ready to be stopped.
//
// httplib's stop() does nothing until the listening loop has started (is_running()): a stop
// that comes first leaves the loop in accept() for good, and joining its thread hangs. The loop
// asks for its task queue (Server::new_task_queue) right after it marks itself running, so that
// request is the event this waits for; the thread is handed back only once it came (or the
// listening ended without it: a socket that failed).
//
// Thread-safety: call once per server, from the thread that owns it, before any request.
#pragma once

#include <httplib.h>

#include <future>
#include <memory>
#include <mutex>
#include <thread>

namespace tr::test_support {

// Starts `server.listen_after_bind()` on a new thread and returns it once the server runs.
// The server must be bound (bind_to_any_port, bind_to_port) and outlive the thread.
inline std::thread ListenAfterBind(httplib::Server& server) {
  struct Started {
    std::once_flag once;
    std::promise<void> promise;
    void Tell() {
      std::call_once(once, [this] { promise.set_value(); });
    }
  };
  auto started = std::make_shared<Started>();
  std::future<void> running = started->promise.get_future();
  server.new_task_queue = [started, make_queue = server.new_task_queue] {
    started->Tell();
    return make_queue();
  };
  std::thread thread([&server, started] {
    server.listen_after_bind();
    started->Tell();  // ended without running: nothing is left to stop
  });
  running.wait();
  return thread;
}

}  // namespace tr::test_support
