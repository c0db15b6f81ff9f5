// The apps/v1 workloads of the fake Kubernetes API: Deployments, ReplicaSets, StatefulSets and
// DaemonSets, as a test (or kubectl) creates them, and their status as their controllers would
// report it; besides them, read-only, the controllers of the fleet file's pods (set_fleet_objects).
// Like the real API server: POST creates (generation 1; 409 AlreadyExists), GET reads one or
// lists a namespace (or every namespace) with an equality-based labelSelector, PATCH with a
// JSON merge patch changes an object (a changed spec bumps metadata.generation), and PATCH on
// the `status` subresource changes only the status. Nothing runs the workloads: their status
// is what was last written to it, so a test decides when a rollout is complete.
//
// Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "nlohmann/json.hpp"

namespace httplib {
class Server;
}

namespace tr::sim {

// Whether `obj`'s labels match an equality-based selector: "a=b", "a==b", "a!=b", "a" (comma
// separated; empty matches everything).
bool LabelsMatch(const std::string& selector, const nlohmann::json& obj);

class WorkloadStore {
 public:
  // Registers the routes on `server`, which must not be listening yet.
  void AddRoutes(httplib::Server& server);
  // Objects listed and got besides the created ones (`plural` "replicasets", ...: every
  // namespace's); called without the store's lock held.
  void set_fleet_objects(std::function<nlohmann::json(const std::string& plural)> objects) {
    fleet_objects_ = std::move(objects);
  }

 private:
  std::mutex mu_;
  std::map<std::string, nlohmann::json> objects_;  // "<plural>/<namespace>/<name>"
  std::function<nlohmann::json(const std::string& plural)> fleet_objects_;
};

}  // namespace tr::sim
