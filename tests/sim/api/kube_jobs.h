// batch/v1 Jobs of the fake Kubernetes API, and the pods a Job controller creates for them.
// Like the real API server:
//   - POST a Job: metadata.name (or generateName) required; restartPolicy must be Never or
//     OnFailure, and Never with a podFailurePolicy (422 Invalid otherwise); 409 AlreadyExists for
//     a taken name. The server sets uid, resourceVersion, creationTimestamp, generation, the
//     selector on batch.kubernetes.io/controller-uid and the template labels controller-uid,
//     job-name (and their batch.kubernetes.io/ forms), and the spec defaults (backoffLimit 6,
//     completions and parallelism 1).
//   - GET one or list a namespace with an equality-based labelSelector; DELETE with
//     DeleteOptions.propagationPolicy (body or query): Background and Foreground delete the
//     Job's pods too, Orphan (the default of batch/v1 Jobs) leaves them.
//   - the `status` subresource: PUT (conditional on metadata.resourceVersion when given: 409
//     Conflict) or PATCH (merge patch) change only the status.
//   - pods: POST (name or generateName), and PUT / PATCH of their `status`; list, get and delete
//     go through the pod routes (kube_api_pods.cc), which ask this store too.
//   - a pod's log: GET pods/<name>/log (text/plain; `container`, required when the pod has
//     several; `tailLines`): 404 for an unknown pod, 400 for an unknown container or one not
//     started yet (no running or terminated state). Only the pods of this store have logs.
// Nothing runs a Job: a test plays the Job controller and the kubelet, writing the statuses.
// Test-only, as a kubelet holds a log and not the API: the log served is the file the pod's
// annotation kLogFileAnnotation names (read at each request; missing: an empty log).
// Every write takes a new resourceVersion from the cluster's counter.
//
// Thread-safe. Its lock is taken after the cluster's, never before.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "nlohmann/json.hpp"

namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace tr::sim {

inline constexpr char kLogFileAnnotation[] = "sim.talos-reconciler.test/log-file";

class JobStore {
 public:
  struct Clock {
    std::function<uint64_t()> next_resource_version;  // takes the cluster's lock
    std::function<std::string()> now;                 // "2026-11-23T10:00:00Z"
  };
  explicit JobStore(Clock clock) : clock_(std::move(clock)) {}

  // Registers the routes on `server`, which must not be listening yet.
  void AddRoutes(httplib::Server& server);

  // The pods of namespace `ns` ("" = all) that `selected` keeps, appended to `items`.
  void AppendPods(const std::string& ns, const std::function<bool(const nlohmann::json&)>& selected,
                  nlohmann::json& items);
  std::optional<nlohmann::json> Pod(const std::string& ns, const std::string& name);
  // Removes the pod; nullopt when this store has none of that name.
  std::optional<nlohmann::json> DeletePod(const std::string& ns, const std::string& name);

 private:
  void JobRoutes(httplib::Server& server);
  void PodRoutes(httplib::Server& server);
  void PodLog(const httplib::Request& req, httplib::Response& res);
  // Sets what the API server sets on an object it creates (name, namespace, uid, creation time,
  // resourceVersion, kind, apiVersion); returns the uid.
  std::string StampCreated(nlohmann::json& object, const char* kind, const char* api_version,
                           const std::string& name, const std::string& ns);
  // Keeps `object` in `objects` and replies 201 with it; 409 AlreadyExists when the name is taken
  // (`resource` "jobs", `qualified` "jobs.batch", as the API server names them in that error).
  void StoreCreated(std::map<std::string, nlohmann::json>& objects, nlohmann::json object,
                    const char* resource, const char* qualified, httplib::Response& res);
  // PUT / PATCH of the `status` subresource at `path` (namespace and name captured) of `objects`.
  void StatusRoutes(httplib::Server& server, const std::string& path,
                    std::map<std::string, nlohmann::json>& objects, const std::string& resource);

  const Clock clock_;
  std::mutex mu_;
  std::map<std::string, nlohmann::json> jobs_;  // "<namespace>/<name>"
  std::map<std::string, nlohmann::json> pods_;  // "<namespace>/<name>"
};

}  // namespace tr::sim
