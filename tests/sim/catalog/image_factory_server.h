// The simulated Image Factory's HTTP API on 127.0.0.1 (an ephemeral port), over an ImageFactory
// catalogue:
//   POST /schematics                          schematic YAML -> 201 {"id", "schematic"}; 400 text
//                                             for invalid YAML, an unknown key, an owner
//   GET  /versions                            ["v1.13.9", "v1.14.0", ...]
//   GET  /version/<v>/extensions/official     [{name, ref, digest, author, description}]; 404
//                                             for a version it does not build
// Errors are plain text, as the factory's http.Error answers (internal/frontend/http/http.go):
// 400 with the decoder's message, 404 with the lookup's, 500 "internal server error" for
// anything else (a version that is not semver included).
//
// Faults (set_faults) hold for every request: 500, a hang (the request is read and not answered
// until the fault is cleared or the server stops), or a delay in fleet time through the
// injected Scheduler.
//
// Thread-safety: serves on its own threads; set_faults from any thread; Stop once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "tests/sim/catalog/image_factory.h"
#include "tests/sim/common/scheduler.h"

namespace httplib {
class Server;
}

namespace tr::sim {

struct FactoryFaults {
  bool internal_error = false;         // every request answers 500 "internal server error"
  bool hang = false;                   // requests are read and not answered until cleared
  std::chrono::milliseconds delay{0};  // fleet time before each answer (times the time scale)
};

class ImageFactoryServer {
 public:
  // Listens on 127.0.0.1:<ephemeral> and records its URL in `factory`. Unavailable when it
  // cannot bind.
  static absl::StatusOr<std::unique_ptr<ImageFactoryServer>> Start(
      std::shared_ptr<ImageFactory> factory, std::shared_ptr<Scheduler> scheduler,
      double time_scale);
  ~ImageFactoryServer();
  ImageFactoryServer(const ImageFactoryServer&) = delete;
  ImageFactoryServer& operator=(const ImageFactoryServer&) = delete;

  // Releases hanging requests and stops serving. Idempotent.
  void Stop();
  const std::string& url() const { return url_; }
  ImageFactory& factory() const { return *factory_; }

  FactoryFaults faults() const;
  void set_faults(FactoryFaults faults);
  // Requests held by a hang or a delay right now.
  int held_requests() const;
  // Blocks until `count` requests are held, or `timeout` (real time) passes: whether they are.
  bool WaitUntilHeld(int count, std::chrono::milliseconds timeout) const;

 private:
  ImageFactoryServer() = default;
  void Routes();
  // Applies the faults before a request is routed: true when it was answered (500).
  bool HoldOrFail();

  std::shared_ptr<ImageFactory> factory_;
  std::shared_ptr<Scheduler> scheduler_;
  double time_scale_ = 1;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string url_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  int held_ = 0;
  FactoryFaults faults_;
  bool stopping_ = false;
};

}  // namespace tr::sim
