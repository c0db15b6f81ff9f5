#include "reconciler/features/k8s_job/job_runner.h"

#include <optional>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "reconciler/runtime/json_fields.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler::k8s_job {
namespace {

using k8s_upgrade::UpgradeTaskStatus;
using nlohmann::json;

// Enough lines to hold the last progress line: upgrade-k8s prints one per step.
constexpr int kLogTailLines = 20;

constexpr char kBackground[] =
    R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"})";

UpgradeTaskStatus Failed(const core::Version& target, std::string component, absl::Status status) {
  UpgradeTaskStatus task;
  task.state = UpgradeTaskStatus::State::kFailed;
  task.target = target.ToString();
  task.outcome.component = std::move(component);
  task.outcome.status = std::move(status);
  return task;
}

bool Finished(const json& job) {
  for (const json& c : json_fields::List(json_fields::Field(job, "status"), "conditions")) {
    const std::string type = json_fields::Text(c, "type");
    if ((type == "Complete" || type == "Failed") && json_fields::Text(c, "status") == "True") {
      return true;
    }
  }
  return false;
}

// The name of a Job of `list_json` (a JobList) that has not finished; nullopt when none.
std::optional<std::string> UnfinishedJob(const std::string& list_json) {
  const json list = json::parse(list_json, nullptr, false);  // outlives the loop over its items
  for (const json& job : json_fields::List(list, "items")) {
    if (Finished(job)) continue;
    const std::string name = json_fields::Text(json_fields::Field(job, "metadata"), "name");
    return name.empty() ? "?" : name;
  }
  return std::nullopt;
}

// A failure under another retry token than the profile's: `talos-reconciler retry` was run.
bool RetryAsked(const UpgradeTaskStatus& task, const core::ClusterProfile& profile) {
  return task.state == UpgradeTaskStatus::State::kFailed && task.retry_token != profile.retry_token;
}

}  // namespace

std::string JobUpgradeRunner::JobPath(const std::string& name) const {
  return fmt::format("/apis/batch/v1/namespaces/{}/jobs{}", options_.job.namespace_name,
                     name.empty() ? "" : "/" + name);
}

UpgradeTaskStatus JobUpgradeRunner::Ensure(const core::ClusterProfile& profile,
                                           const core::Version& target,
                                           const core::SupportMatrix& matrix) {
  {
    MutexLock lock(mu_);
    auto it = finished_.find(profile.name);
    if (it != finished_.end() && it->second.target == target.ToString()) {
      if (!RetryAsked(it->second, profile)) return it->second;
      finished_.erase(it);
    }
  }
  const std::string name = UpgradeJobName(profile.name, target);
  absl::StatusOr<std::string> job = kube_.GetObject(JobPath(name));
  if (absl::IsNotFound(job.status())) {
    // Another target's Job still running on this cluster: one upgrade at a time.
    absl::StatusOr<std::string> others = kube_.GetObject(
        JobPath("") + "?labelSelector=" + kClusterLabel + "%3D" + ClusterLabelValue(profile.name));
    if (!others.ok()) return Failed(target, "Job " + name, others.status());
    if (std::optional<std::string> other = UnfinishedJob(*others)) {
      UpgradeTaskStatus waiting;
      waiting.target = target.ToString();
      waiting.progress = fmt::format("waiting for Job {} to finish", *other);
      return waiting;
    }
    job = Create(profile, target, matrix);
  }
  if (!job.ok()) return Failed(target, "Job " + name, job.status());
  {
    MutexLock lock(mu_);
    seen_[profile.name] = target.ToString();
  }
  return Follow(profile, name, *job, target);
}

absl::StatusOr<std::string> JobUpgradeRunner::Create(const core::ClusterProfile& profile,
                                                     const core::Version& target,
                                                     const core::SupportMatrix& matrix) {
  auto secret = options_.secrets.find(profile.credentials);
  if (secret == options_.secrets.end()) {
    return absl::InvalidArgumentError(fmt::format(
        "no Secret for credentials {}: give --kubernetes-upgrade-job-secret {}=<secret>",
        profile.credentials, profile.credentials));
  }
  // Creating the Job is this replica's change to the cluster: only while it holds it.
  if (options_.may_change) {
    if (absl::Status s = options_.may_change(profile.name); !s.ok()) return s;
  }
  UpgradeJobSettings settings = options_.job;
  settings.secret_name = secret->second;
  const std::string name = UpgradeJobName(profile.name, target);
  absl::StatusOr<std::string> created =
      kube_.CreateObject(JobPath(""), UpgradeJobJson(profile, target, matrix, settings));
  if (absl::IsAlreadyExists(created.status())) return kube_.GetObject(JobPath(name));
  if (created.ok()) {
    ModuleLogger("k8s-upgrade")
        ->info("cluster={} step=create-job job={} namespace={}", profile.name, name,
               options_.job.namespace_name);
  }
  return created;
}

UpgradeTaskStatus JobUpgradeRunner::Follow(const core::ClusterProfile& profile,
                                           const std::string& name, const std::string& job_json,
                                           const core::Version& target) {
  const std::string& cluster = profile.name;
  absl::StatusOr<std::string> pods = kube_.GetObject(fmt::format(
      "/api/v1/namespaces/{}/pods?labelSelector=job-name%3D{}", options_.job.namespace_name, name));
  if (!pods.ok()) return Failed(target, "Job " + name, pods.status());
  absl::StatusOr<JobReading> reading = ReadUpgradeJob(job_json, *pods);
  if (!reading.ok()) return Failed(target, "Job " + name, reading.status());
  UpgradeTaskStatus task = reading->task;
  task.target = target.ToString();
  if (reading->deleting) {
    task.state = UpgradeTaskStatus::State::kRunning;
    task.progress = fmt::format("Job {} is being deleted; a new one follows", name);
    return task;
  }
  if (task.state == UpgradeTaskStatus::State::kRunning) {
    AddLogProgress(cluster, reading->running_pod, task);
    return task;
  }
  // A failed Job the profile asks to retry: deleted, and the next look creates a new one.
  const bool retry_asked = !reading->retry && RetryAsked(task, profile);
  // Finished: a success or a retry needs the Job no more; a failure stays to be looked at.
  if (task.state == UpgradeTaskStatus::State::kSucceeded || reading->retry || retry_asked) {
    absl::Status deleted = kube_.DeleteObject(JobPath(name), kBackground);
    if (!deleted.ok() && !absl::IsNotFound(deleted)) {
      ModuleLogger("k8s-upgrade")
          ->warn("cluster={} step=delete-job job={} error={}", cluster, name,
                 LogValue(std::string(deleted.message())));
    }
  }
  if (retry_asked) {
    task.state = UpgradeTaskStatus::State::kRunning;
    task.progress = fmt::format("a retry was asked: Job {} deleted, a new one follows", name);
    return task;
  }
  if (!reading->retry) {
    MutexLock lock(mu_);
    finished_[cluster] = task;
  }
  return task;
}

void JobUpgradeRunner::AddLogProgress(const std::string& cluster, const std::string& pod,
                                      UpgradeTaskStatus& task) {
  if (pod.empty()) return;
  // Best effort: without pods/log in the Role, or before the container starts, the status
  // says what it said before.
  absl::StatusOr<std::string> log =
      kube_.GetText(fmt::format("/api/v1/namespaces/{}/pods/{}/log?container={}&tailLines={}",
                                options_.job.namespace_name, pod, kContainerName, kLogTailLines));
  if (!log.ok()) {
    ModuleLogger("k8s-upgrade")
        ->debug("cluster={} step=read-job-log pod={} error={}", cluster, pod,
                LogValue(std::string(log.status().message())));
    return;
  }
  const std::string progress = ProgressOfLog(*log);
  if (progress.empty()) return;
  // "Job x running, attempt 2: kubelets 3/5 (the last one: ...)".
  const size_t last_one = task.progress.find(" (the last one: ");
  task.progress.insert(last_one == std::string::npos ? task.progress.size() : last_one,
                       ": " + progress);
}

bool JobUpgradeRunner::Started(const std::string& cluster, const core::Version& target) {
  {
    MutexLock lock(mu_);
    auto seen = seen_.find(cluster);
    if (seen != seen_.end() && seen->second == target.ToString()) return true;
  }
  return kube_.GetObject(JobPath(UpgradeJobName(cluster, target))).ok();
}

}  // namespace tr::reconciler::k8s_job
