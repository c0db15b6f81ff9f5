// talos-sim's control endpoint: a small HTTP/JSON API on 127.0.0.1 for tests that run talos-sim
// as a separate process. Routes:
//   GET    /v1/nodes                     every node's snapshot
//   GET    /v1/nodes/<name>              one node's snapshot (404 unknown)
//   POST   /v1/nodes/<name>/faults       inject {"kind": "boot_failure", "count": 1,
//                                                  "delay": "5s", "image": "v1.14"}
//   DELETE /v1/nodes/<name>/faults[?kind=<kind>]   clear faults
//   GET    /v1/journal[?since=<seq>]     journal entries after seq
//   GET    /v1/clusters                  where each cluster's endpoints and files are
//   GET    /v1/factory                   the Image Factory's URL, versions, broken versions (and
//                                         how often they were read), faults
//   POST   /v1/factory/faults            {"kind": "internal_error" | "hang" | "slow",
//                                         "delay": "5s"} (slow: fleet time per answer)
//   DELETE /v1/factory/faults[?kind=<kind>]   clear the factory's faults
//   POST   /v1/factory/versions          {"version": "v1.14.1"}: a new release
//   POST   /v1/factory/broken            {"version": "v1.14.1"}: that release marked broken
//
// Thread-safety: serves on its own threads; Stop from any thread once.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "tests/sim/fleet.h"

namespace httplib {
class Server;
}

namespace tr::sim {

nlohmann::json SnapshotToJson(const NodeSnapshot& node);
nlohmann::json AccessToJson(const ClusterAccess& access);

class ControlServer {
 public:
  // Listens on 127.0.0.1 on an ephemeral port. Unavailable when it cannot bind.
  static absl::StatusOr<std::unique_ptr<ControlServer>> Start(Fleet* fleet);
  ~ControlServer();
  void Stop();
  const std::string& url() const { return url_; }

 private:
  ControlServer() = default;
  void Routes();
  void FactoryRoutes();

  Fleet* fleet_ = nullptr;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string url_;
};

}  // namespace tr::sim
