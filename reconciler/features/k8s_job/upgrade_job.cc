#include "reconciler/features/k8s_job/upgrade_job.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "reconciler/operations/k8s_upgrade/upgrade_k8s_command.h"
#include "reconciler/runtime/json_fields.h"

namespace tr::reconciler::k8s_job {
namespace {

using k8s_upgrade::UpgradeTaskStatus;
using nlohmann::json;

constexpr char kProfileAnnotation[] = "talos-reconciler.dev/profile";
constexpr char kDefaultsAnnotation[] = "talos-reconciler.dev/repository-defaults";
constexpr char kRepoDir[] = "/etc/talos-reconciler/upgrade";
constexpr char kCredentialsDir[] = "/etc/talos-reconciler/talos";
constexpr char kTerminationLog[] = "/dev/termination-log";

// A YAML double-quoted scalar: JSON's string escapes are YAML's.
std::string Quoted(const std::string& s) { return json(s).dump(); }

// The profile as far as `upgrade-k8s` reads it, asking for `target`.
std::string ProfileYaml(const core::ClusterProfile& p, const core::Version& target) {
  std::string out = fmt::format(
      "apiVersion: talos-reconciler.dev/v1alpha1\nkind: ClusterProfile\nmetadata:\n  name: {}\n"
      "spec:\n  endpoints: [",
      Quoted(p.name));
  for (size_t i = 0; i < p.endpoints.size(); ++i) {
    out += (i == 0 ? "" : ", ") + Quoted(p.endpoints[i]);
  }
  out += fmt::format(
      "]\n  credentials: {}\n  talos:\n    version: {}\n    image: {}\n  kubernetes:\n"
      "    version: {}\n  nodes:\n",
      Quoted(p.credentials), Quoted(p.talos_version.ToString()), Quoted(p.talos_image),
      Quoted(target.ToString()));
  for (const core::NodeSpec& n : p.nodes) {
    out += fmt::format("    - {{name: {}, address: {}, role: {}}}\n", Quoted(n.name),
                       Quoted(n.address), core::NodeRoleName(n.role));
  }
  return out;
}

// reconciler.yaml with every row of the daemon's support matrix, so the Job checks the same.
std::string DefaultsYaml(const core::SupportMatrix& matrix) {
  std::string out =
      "apiVersion: talos-reconciler.dev/v1alpha1\nkind: RepositoryDefaults\nsupportMatrix:\n";
  for (const core::MinorVersion& talos : matrix.TalosMinors()) {
    const core::SupportMatrixEntry row = *matrix.Find(talos);
    out += fmt::format(
        "  - {{talos: \"{}\", kubernetes: {{min: \"{}\", max: \"{}\"}}, "
        "minimumUpgradeFrom: \"{}\"}}\n",
        talos.ToString(), row.kubernetes_min.ToString(), row.kubernetes_max.ToString(),
        row.minimum_upgrade_from.ToString());
  }
  return out;
}

std::string Dashed(std::string s) {
  for (char& c : s) {
    if (c == '.') c = '-';
  }
  return s;
}

uint32_t Fnv1a(const std::string& s) {
  uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h;
}

}  // namespace

std::string ClusterLabelValue(const std::string& cluster) {
  if (cluster.size() <= 63) return cluster;
  return fmt::format("{}-{:08x}", cluster.substr(0, 54), Fnv1a(cluster));
}

namespace {

json Labels(const core::ClusterProfile& profile, const core::Version& target) {
  return {{"app.kubernetes.io/name", "talos-reconciler"},
          {kComponentLabel, kComponentValue},
          {kClusterLabel, ClusterLabelValue(profile.name)},
          {kTargetLabel, target.ToString()}};
}

json Container(const core::ClusterProfile& profile, const core::Version& target,
               const UpgradeJobSettings& s) {
  json args = {"upgrade-k8s",
               "--cluster",
               profile.name,
               "--to",
               target.ToString(),
               "--repo",
               kRepoDir,
               "--credentials-dir",
               kCredentialsDir,
               "--termination-log",
               kTerminationLog,
               "--poll-interval-ms",
               std::to_string(s.poll_interval.count()),
               "--static-pod-timeout-ms",
               std::to_string(s.static_pod_timeout.count()),
               "--kubelet-timeout-ms",
               std::to_string(s.kubelet_timeout.count())};
  if (!s.prune_manifests) args.push_back("--manifests-no-prune");
  return {{"name", kContainerName},
          {"image", s.image},
          {"command", {"/usr/local/bin/talos-reconciler"}},
          {"args", std::move(args)},
          {"terminationMessagePath", kTerminationLog},
          {"terminationMessagePolicy", "FallbackToLogsOnError"},
          {"resources", {{"requests", {{"cpu", "20m"}, {"memory", "32Mi"}}}}},
          {"securityContext",
           {{"runAsNonRoot", true},
            {"runAsUser", 65532},
            {"allowPrivilegeEscalation", false},
            {"readOnlyRootFilesystem", true},
            {"capabilities", {{"drop", {"ALL"}}}}}},
          {"volumeMounts",
           {{{"name", "talosconfig"},
             {"mountPath", fmt::format("{}/{}", kCredentialsDir, profile.credentials)},
             {"readOnly", true}},
            {{"name", "profile"}, {"mountPath", kRepoDir}, {"readOnly", true}}}}};
}

json Volumes(const core::ClusterProfile& profile, const UpgradeJobSettings& s) {
  auto annotation = [](const char* key) {
    return json{{"fieldPath", fmt::format("metadata.annotations['{}']", key)}};
  };
  return {{{"name", "talosconfig"},
           {"secret",
            {{"secretName", s.secret_name},
             {"defaultMode", 0440},
             {"items", {{{"key", "talosconfig"}, {"path", "talosconfig"}}}}}}},
          {{"name", "profile"},
           {"downwardAPI",
            {{"items",
              {{{"path", fmt::format("clusters/{}.yaml", profile.name)},
                {"fieldRef", annotation(kProfileAnnotation)}},
               {{"path", "reconciler.yaml"}, {"fieldRef", annotation(kDefaultsAnnotation)}}}}}}}};
}

// Exit codes of `upgrade-k8s` (upgrade_k8s_command.h) back to the status class they came from.
absl::StatusCode CodeOfExit(int exit_code) {
  switch (exit_code) {
    case k8s_upgrade::kUpgradeInvalid:
      return absl::StatusCode::kInvalidArgument;
    case k8s_upgrade::kUpgradeRefused:
      return absl::StatusCode::kFailedPrecondition;
    case k8s_upgrade::kUpgradeFailed:
      return absl::StatusCode::kAborted;
    default:
      return absl::StatusCode::kUnavailable;
  }
}

// "upgrade-k8s: kubelet failed on w-2: not Ready after 3m" → component, node, message.
void ParseFailureLine(std::string line, k8s_upgrade::UpgradeOutcome& outcome, std::string& text) {
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  if (auto nl = line.rfind('\n'); nl != std::string::npos) line = line.substr(nl + 1);
  text = line;
  constexpr std::string_view kPrefix = "upgrade-k8s: ";
  if (!line.starts_with(kPrefix)) return;
  line = line.substr(kPrefix.size());
  const size_t failed = line.find(" failed");
  if (failed == std::string::npos) {
    text = line;
    return;
  }
  outcome.component = line.substr(0, failed);
  std::string rest = line.substr(failed + 7);
  if (rest.starts_with(" on ")) {
    const size_t colon = rest.find(": ");
    outcome.node = rest.substr(4, colon == std::string::npos ? std::string::npos : colon - 4);
    rest = colon == std::string::npos ? "" : rest.substr(colon);
  }
  text = rest.starts_with(": ") ? rest.substr(2) : rest;
}

struct LastPod {
  bool terminated = false;
  int exit_code = 0;
  std::string message;
  std::string finished_at;
};

// An integer field of an answer, clamped to what an int holds.
int SmallInteger(const json& object, const char* key) {
  return static_cast<int>(std::clamp<int64_t>(json_fields::Integer(object, key, 0),
                                              std::numeric_limits<int>::min(),
                                              std::numeric_limits<int>::max()));
}

// The upgrade-k8s container statuses of `pod`.
std::vector<const json*> UpgradeContainers(const json& pod) {
  std::vector<const json*> containers;
  for (const json& c : json_fields::List(json_fields::Field(pod, "status"), "containerStatuses")) {
    if (json_fields::Text(c, "name") == kContainerName) containers.push_back(&c);
  }
  return containers;
}

LastPod LastTerminated(const json& pods) {
  LastPod last;
  for (const json& pod : json_fields::List(pods, "items")) {
    for (const json* c : UpgradeContainers(pod)) {
      const json& t = json_fields::Field(json_fields::Field(*c, "state"), "terminated");
      if (!t.is_object()) continue;
      const std::string at = json_fields::Text(t, "finishedAt");
      if (last.terminated && at < last.finished_at) continue;
      last = {true, SmallInteger(t, "exitCode"), json_fields::Text(t, "message"), at};
    }
  }
  return last;
}

// The pod whose upgrade-k8s container has not terminated (not being deleted); "" if none.
std::string RunningPod(const json& pods) {
  for (const json& pod : json_fields::List(pods, "items")) {
    const json& meta = json_fields::Field(pod, "metadata");
    if (!json_fields::Field(meta, "deletionTimestamp").is_null()) continue;
    for (const json* c : UpgradeContainers(pod)) {
      if (!json_fields::Field(json_fields::Field(*c, "state"), "running").is_null()) {
        return json_fields::Text(meta, "name");
      }
    }
  }
  return "";
}

// "kubelets 3/5" of "kubelets 3/5: k8s-w-1 at v1.35.0"; "" for any other line.
std::string ProgressOfLine(std::string_view line) {
  const size_t colon = line.find(": ");
  if (colon == std::string_view::npos) return "";
  const std::string_view head = line.substr(0, colon);
  const size_t space = head.rfind(' ');
  const size_t slash = head.find('/', space == std::string_view::npos ? 0 : space);
  if (space == std::string_view::npos || space == 0 || slash == std::string_view::npos) return "";
  const auto digits = [](std::string_view d) {
    return !d.empty() && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(head.substr(space + 1, slash - space - 1)) || !digits(head.substr(slash + 1))) {
    return "";
  }
  return std::string(head);
}

}  // namespace

std::string ProgressOfLog(std::string_view log) {
  std::string progress;
  size_t start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    if (std::string p = ProgressOfLine(log.substr(start, end - start)); !p.empty()) progress = p;
    start = end + 1;
  }
  return progress;
}

std::string UpgradeJobName(const std::string& cluster, const core::Version& target) {
  const std::string version = "v" + Dashed(target.ToString());
  constexpr size_t kMax = 63;
  const std::string prefix = "k8s-upgrade-";
  std::string name = prefix + Dashed(cluster) + "-" + version;
  if (name.size() <= kMax) return name;
  const std::string hash = fmt::format("{:08x}", Fnv1a(cluster));
  const size_t room = kMax - prefix.size() - version.size() - hash.size() - 2;
  std::string cut = Dashed(cluster).substr(0, room);
  while (!cut.empty() && cut.back() == '-') cut.pop_back();
  return prefix + cut + "-" + hash + "-" + version;
}

std::string UpgradeJobJson(const core::ClusterProfile& profile, const core::Version& target,
                           const core::SupportMatrix& matrix, const UpgradeJobSettings& s) {
  const json labels = Labels(profile, target);
  const json exit_codes = {
      {"containerName", kContainerName},
      {"operator", "In"},
      {"values",
       {k8s_upgrade::kUpgradeInvalid, k8s_upgrade::kUpgradeRefused, k8s_upgrade::kUpgradeFailed}}};
  const json pod_spec = {{"restartPolicy", "Never"},
                         {"automountServiceAccountToken", false},
                         {"enableServiceLinks", false},
                         {"securityContext",
                          {{"runAsNonRoot", true},
                           {"fsGroup", 65532},
                           {"seccompProfile", {{"type", "RuntimeDefault"}}}}},
                         {"containers", {Container(profile, target, s)}},
                         {"volumes", Volumes(profile, s)}};
  json job = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata",
       {{"name", UpgradeJobName(profile.name, target)},
        {"namespace", s.namespace_name},
        {"labels", labels}}},
      {"spec",
       {{"backoffLimit", s.backoff_limit},
        {"activeDeadlineSeconds", s.active_deadline.count()},
        {"ttlSecondsAfterFinished", s.ttl_after_finished.count()},
        {"podFailurePolicy",
         {{"rules",
           {{{"action", "FailJob"}, {"onExitCodes", exit_codes}},
            {{"action", "Ignore"}, {"onPodConditions", {{{"type", "DisruptionTarget"}}}}}}}}},
        {"template",
         {{"metadata",
           {{"labels", labels},
            {"annotations",
             {{kProfileAnnotation, ProfileYaml(profile, target)},
              {kDefaultsAnnotation, DefaultsYaml(matrix)}}}}},
          {"spec", pod_spec}}}}}};
  // The retry the Job was made for: a failed Job under an older one is replaced (job_runner.h).
  if (!profile.retry_token.empty()) {
    job["metadata"]["annotations"] = {{std::string(core::kRetryAnnotation), profile.retry_token}};
  }
  return job.dump();
}

absl::StatusOr<JobReading> ReadUpgradeJob(const std::string& job_json,
                                          const std::string& pods_json) {
  const json job = json::parse(job_json, nullptr, false);
  const json pods = json::parse(pods_json, nullptr, false);
  if (!job.is_object() || !pods.is_object()) {
    return absl::InternalError("the Kubernetes API answered something that is not JSON");
  }
  JobReading r;
  const json& meta = json_fields::Field(job, "metadata");
  r.task.target = json_fields::Text(json_fields::Field(meta, "labels"), kTargetLabel);
  r.deleting = !json_fields::Field(meta, "deletionTimestamp").is_null();
  r.task.retry_token = json_fields::Text(json_fields::Field(meta, "annotations"),
                                         core::kRetryAnnotation.data());
  const json& status = json_fields::Field(job, "status");
  std::string failed_reason, failed_message;
  bool complete = false, failed = false;
  for (const json& c : json_fields::List(status, "conditions")) {
    if (json_fields::Text(c, "status") != "True") continue;
    const std::string type = json_fields::Text(c, "type");
    if (type == "Complete") complete = true;
    if (type == "Failed") {
      failed = true;
      failed_reason = json_fields::Text(c, "reason");
      failed_message = json_fields::Text(c, "message");
    }
  }
  const LastPod last = LastTerminated(pods);
  const std::string name = json_fields::Text(meta, "name");
  if (complete) {
    r.task.state = UpgradeTaskStatus::State::kSucceeded;
    return r;
  }
  if (!failed) {
    const int64_t attempt = std::max(SmallInteger(status, "failed"), 0) + int64_t{1};
    r.task.progress = fmt::format("Job {} running, attempt {}", name, attempt);
    r.running_pod = RunningPod(pods);
    if (last.terminated && !last.message.empty()) {
      k8s_upgrade::UpgradeOutcome ignored;
      std::string text;
      ParseFailureLine(last.message, ignored, text);
      r.task.progress += " (the last one: " + text + ")";
    }
    return r;
  }
  r.task.state = UpgradeTaskStatus::State::kFailed;
  k8s_upgrade::UpgradeOutcome& outcome = r.task.outcome;
  if (failed_reason == "DeadlineExceeded" || !last.terminated) {
    outcome.component = "Job " + name;
    outcome.status = absl::DeadlineExceededError(
        fmt::format("{}: {}", failed_reason.empty() ? "Failed" : failed_reason, failed_message));
    r.retry = true;
    return r;
  }
  std::string text;
  ParseFailureLine(last.message, outcome, text);
  if (outcome.component.empty()) outcome.component = "Job " + name;
  if (text.empty()) text = fmt::format("exit code {} ({})", last.exit_code, failed_reason);
  outcome.status = absl::Status(CodeOfExit(last.exit_code), text);
  r.retry = CodeOfExit(last.exit_code) == absl::StatusCode::kUnavailable;
  return r;
}

}  // namespace tr::reconciler::k8s_job
