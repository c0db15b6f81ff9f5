#include "tests/sim/api/kube_jobs.h"

#include <httplib.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <vector>

#include "fmt/format.h"
#include "tests/sim/common/ids.h"
#include "tests/sim/common/json_reply.h"
#include "tests/sim/api/kube_workloads.h"

namespace tr::sim {
namespace {

using nlohmann::json;

constexpr char kJobs[] = R"(/apis/batch/v1/namespaces/([^/]+)/jobs)";
constexpr char kPods[] = R"(/api/v1/namespaces/([^/]+)/pods)";

std::string RandomSuffix() {
  static std::mutex mu;
  static std::mt19937 gen(std::random_device{}());
  static constexpr char kChars[] = "bcdfghjklmnpqrstvwxz2456789";  // as the API server's
  std::lock_guard lock(mu);
  std::string out;
  for (int i = 0; i < 5; ++i) out += kChars[gen() % (sizeof(kChars) - 1)];
  return out;
}

// The name of a new object: metadata.name, else generateName + 5 characters; "" when neither.
std::string NewName(const json& meta) {
  if (!meta.value("name", "").empty()) return meta["name"];
  if (!meta.value("generateName", "").empty())
    return meta.value("generateName", "") + RandomSuffix();
  return "";
}

// The object of a create request, named (`name`); nullopt once 400 or 422 is answered.
std::optional<json> NewObject(const httplib::Request& req, httplib::Response& res,
                              const std::string& kind, std::string& name) {
  json obj = json::parse(req.body, nullptr, false);
  if (!obj.is_object() || !obj.value("metadata", json::object()).is_object()) {
    SendKubeFailure(res, 400, "BadRequest", "the body of the request was in an unknown format");
    return std::nullopt;
  }
  name = NewName(obj.value("metadata", json::object()));
  if (name.empty()) {
    SendKubeFailure(res, 422, "Invalid",
                    kind +
                        " \"\" is invalid: metadata.name: Required value: name or generateName is "
                        "required");
    return std::nullopt;
  }
  return obj;
}

// What the API server's Job validation refuses (422), or "".
std::string InvalidJob(const json& job, const std::string& name) {
  const json spec = job.value("spec", json::object());
  const json pod = spec.value("template", json::object()).value("spec", json::object());
  const std::string restart = pod.value("restartPolicy", "");
  const std::string prefix = fmt::format("Job.batch \"{}\" is invalid: ", name);
  if (restart != "Never" && restart != "OnFailure") {
    return prefix +
           "spec.template.spec.restartPolicy: Required value: valid values: "
           "\"OnFailure\", \"Never\"";
  }
  if (spec.contains("podFailurePolicy") && restart != "Never") {
    return prefix + "spec.podFailurePolicy: Invalid value: \"" + restart +
           "\": only \"Never\" is supported when podFailurePolicy is specified";
  }
  if (pod.value("containers", json::array()).empty()) {
    return prefix + "spec.template.spec.containers: Required value";
  }
  return "";
}

json DeleteOptions(const httplib::Request& req) {
  json options = json::parse(req.body.empty() ? "{}" : req.body, nullptr, false);
  if (!options.is_object()) options = json::object();
  if (req.has_param("propagationPolicy")) {
    options["propagationPolicy"] = req.get_param_value("propagationPolicy");
  }
  return options;
}

}  // namespace

void JobStore::AddRoutes(httplib::Server& s) {
  JobRoutes(s);
  PodRoutes(s);
}

std::string JobStore::StampCreated(json& object, const char* kind, const char* api_version,
                                   const std::string& name, const std::string& ns) {
  const std::string uid = NewUuid();
  json& meta = object["metadata"];
  meta["name"] = name;
  meta["namespace"] = ns;
  meta["uid"] = uid;
  meta["creationTimestamp"] = clock_.now();
  meta["resourceVersion"] = std::to_string(clock_.next_resource_version());
  object["kind"] = kind;
  object["apiVersion"] = api_version;
  return uid;
}

void JobStore::StoreCreated(std::map<std::string, json>& objects, json object, const char* resource,
                            const char* qualified, httplib::Response& res) {
  const std::string name = object["metadata"]["name"];
  const std::string key = object["metadata"]["namespace"].get<std::string>() + "/" + name;
  std::lock_guard lock(mu_);
  auto [it, inserted] = objects.emplace(key, std::move(object));
  if (!inserted) {
    return SendKubeFailure(res, 409, "AlreadyExists",
                           fmt::format("{} \"{}\" already exists", qualified, name), resource,
                           name);
  }
  SendJson(res, 201, it->second);
}

void JobStore::JobRoutes(httplib::Server& s) {
  s.Post(kJobs, [this](const httplib::Request& req, httplib::Response& res) {
    std::string name;
    std::optional<json> created = NewObject(req, res, "Job.batch", name);
    if (!created) return;
    json& job = *created;
    const std::string ns = req.matches[1];
    if (std::string invalid = InvalidJob(job, name); !invalid.empty()) {
      return SendKubeFailure(res, 422, "Invalid", invalid, "jobs", name);
    }
    const std::string uid = StampCreated(job, "Job", "batch/v1", name, ns);
    job["metadata"]["generation"] = 1;
    json& spec = job["spec"];
    for (const char* field : {"completions", "parallelism"}) {
      if (!spec.contains(field)) spec[field] = 1;
    }
    if (!spec.contains("backoffLimit")) spec["backoffLimit"] = 6;
    spec["completionMode"] = spec.value("completionMode", "NonIndexed");
    spec["suspend"] = spec.value("suspend", false);
    spec["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}};
    json& labels = spec["template"]["metadata"]["labels"];
    if (!labels.is_object()) labels = json::object();
    for (const char* key : {"controller-uid", "batch.kubernetes.io/controller-uid"})
      labels[key] = uid;
    for (const char* key : {"job-name", "batch.kubernetes.io/job-name"}) labels[key] = name;
    job["status"] = json::object();
    StoreCreated(jobs_, std::move(job), "jobs", "jobs.batch", res);
  });
  s.Get(kJobs, [this](const httplib::Request& req, httplib::Response& res) {
    const uint64_t rv = clock_.next_resource_version();
    std::lock_guard lock(mu_);
    json items = json::array();
    for (const auto& [key, job] : jobs_) {
      if (job["metadata"]["namespace"] != req.matches[1].str()) continue;
      if (LabelsMatch(req.get_param_value("labelSelector"), job)) items.push_back(job);
    }
    SendJson(res, 200,
             {{"kind", "JobList"},
              {"apiVersion", "batch/v1"},
              {"metadata", {{"resourceVersion", std::to_string(rv)}}},
              {"items", std::move(items)}});
  });
  const std::string one = std::string(kJobs) + "/([^/]+)";
  s.Get(one, [this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu_);
    auto it = jobs_.find(req.matches[1].str() + "/" + req.matches[2].str());
    if (it == jobs_.end()) {
      return SendKubeFailure(res, 404, "NotFound",
                             fmt::format("jobs.batch \"{}\" not found", req.matches[2].str()),
                             "jobs", req.matches[2]);
    }
    SendJson(res, 200, it->second);
  });
  s.Delete(one, [this](const httplib::Request& req, httplib::Response& res) {
    const json options = DeleteOptions(req);
    const std::string policy = options.value("propagationPolicy", "Orphan");
    std::lock_guard lock(mu_);
    auto it = jobs_.find(req.matches[1].str() + "/" + req.matches[2].str());
    if (it == jobs_.end()) {
      return SendKubeFailure(res, 404, "NotFound",
                             fmt::format("jobs.batch \"{}\" not found", req.matches[2].str()),
                             "jobs", req.matches[2]);
    }
    const std::string uid = it->second["metadata"]["uid"];
    for (auto pod = pods_.begin(); pod != pods_.end();) {
      const json labels = pod->second["metadata"].value("labels", json::object());
      if (labels.value("controller-uid", "") != uid) {
        ++pod;
      } else if (policy == "Orphan") {
        pod->second["metadata"].erase("ownerReferences");
        ++pod;
      } else {
        pod = pods_.erase(pod);  // the garbage collector, at once
      }
    }
    jobs_.erase(it);
    SendJson(
        res, 200,
        {{"kind", "Status"},
         {"apiVersion", "v1"},
         {"metadata", json::object()},
         {"status", "Success"},
         {"details",
          {{"name", req.matches[2].str()}, {"group", "batch"}, {"kind", "jobs"}, {"uid", uid}}}});
  });
  StatusRoutes(s, one + "/status", jobs_, "jobs.batch");
}

void JobStore::PodRoutes(httplib::Server& s) {
  s.Post(kPods, [this](const httplib::Request& req, httplib::Response& res) {
    std::string name;
    std::optional<json> created = NewObject(req, res, "Pod", name);
    if (!created) return;
    json& pod = *created;
    StampCreated(pod, "Pod", "v1", name, req.matches[1]);
    if (!pod.contains("status")) pod["status"] = {{"phase", "Pending"}};
    StoreCreated(pods_, std::move(pod), "pods", "pods", res);
  });
  StatusRoutes(s, std::string(kPods) + "/([^/]+)/status", pods_, "pods");
  s.Get(std::string(kPods) + "/([^/]+)/log",
        [this](const httplib::Request& req, httplib::Response& res) { PodLog(req, res); });
}

void JobStore::PodLog(const httplib::Request& req, httplib::Response& res) {
  const std::string name = req.matches[2];
  std::optional<json> pod = Pod(req.matches[1].str(), name);
  if (!pod)
    return SendKubeFailure(res, 404, "NotFound", fmt::format("pods \"{}\" not found", name), "pods",
                           name);
  const json containers = (*pod)["spec"].value("containers", json::array());
  std::string container = req.get_param_value("container");
  if (container.empty() && containers.size() == 1) container = containers[0].value("name", "");
  bool known = false;
  for (const json& c : containers) known = known || c.value("name", "") == container;
  if (!known) {
    return SendKubeFailure(res, 400, "BadRequest",
                           fmt::format("container {} is not valid for pod {}", container, name));
  }
  bool started = false;
  for (const json& c : (*pod)["status"].value("containerStatuses", json::array())) {
    const json state = c.value("state", json::object());
    started = started || (c.value("name", "") == container &&
                          (state.contains("running") || state.contains("terminated")));
  }
  if (!started) {
    return SendKubeFailure(res, 400, "BadRequest",
                           fmt::format("container \"{}\" in pod \"{}\" is waiting to start: "
                                       "ContainerCreating",
                                       container, name));
  }
  // The kubelet's copy of the log: the file the test names (see kLogFileAnnotation).
  std::ifstream in(
      (*pod)["metadata"].value("annotations", json::object()).value(kLogFileAnnotation, ""));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line + "\n");
  size_t first = 0;
  if (req.has_param("tailLines")) {
    const size_t tail = std::strtoul(req.get_param_value("tailLines").c_str(), nullptr, 10);
    first = lines.size() > tail ? lines.size() - tail : 0;
  }
  std::string text;
  for (size_t i = first; i < lines.size(); ++i) text += lines[i];
  res.status = 200;
  res.set_content(text, "text/plain");
}

void JobStore::StatusRoutes(httplib::Server& s, const std::string& path,
                            std::map<std::string, json>& objects, const std::string& resource) {
  auto write = [this, &objects, resource](const httplib::Request& req, httplib::Response& res,
                                          bool put) {
    const json body = json::parse(req.body, nullptr, false);
    if (!body.is_object())
      return SendKubeFailure(res, 400, "BadRequest", "the body is not a JSON object");
    const uint64_t rv = clock_.next_resource_version();
    const std::string name = req.matches[2];
    std::lock_guard lock(mu_);
    auto it = objects.find(req.matches[1].str() + "/" + name);
    if (it == objects.end()) {
      return SendKubeFailure(res, 404, "NotFound",
                             fmt::format("{} \"{}\" not found", resource, name), resource, name);
    }
    json& obj = it->second;
    const std::string given = body.value("metadata", json::object()).value("resourceVersion", "");
    if (put && !given.empty() && given != obj["metadata"]["resourceVersion"]) {
      return SendKubeFailure(
          res, 409, "Conflict",
          fmt::format("Operation cannot be fulfilled on {} \"{}\": the object has been "
                      "modified; please apply your changes to the latest version and try "
                      "again",
                      resource, name),
          resource, name);
    }
    if (put) {
      obj["status"] = body.value("status", json::object());
    } else if (body.contains("status")) {
      obj["status"].merge_patch(body["status"]);
    }
    obj["metadata"]["resourceVersion"] = std::to_string(rv);
    SendJson(res, 200, obj);
  };
  s.Put(path,
        [write](const httplib::Request& req, httplib::Response& res) { write(req, res, true); });
  s.Patch(path,
          [write](const httplib::Request& req, httplib::Response& res) { write(req, res, false); });
}

void JobStore::AppendPods(const std::string& ns, const std::function<bool(const json&)>& selected,
                          json& items) {
  std::lock_guard lock(mu_);
  for (const auto& [key, pod] : pods_) {
    if (!ns.empty() && pod["metadata"]["namespace"] != ns) continue;
    if (selected(pod)) items.push_back(pod);
  }
}

std::optional<json> JobStore::Pod(const std::string& ns, const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(ns + "/" + name);
  if (it == pods_.end()) return std::nullopt;
  return it->second;
}

std::optional<json> JobStore::DeletePod(const std::string& ns, const std::string& name) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(ns + "/" + name);
  if (it == pods_.end()) return std::nullopt;
  json pod = std::move(it->second);
  pods_.erase(it);
  return pod;
}

}  // namespace tr::sim
