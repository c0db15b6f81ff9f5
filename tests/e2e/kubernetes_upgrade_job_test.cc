// `--kubernetes-upgrade-mode job` end to end: the real daemon creates batch/v1 Jobs on the
// simulator's Kubernetes API (a cluster of its own, "home", stands for the cluster the
// reconciler runs in), and this test plays the Job controller and the kubelet: it watches the
// Jobs, runs each one's container (the real `talos-reconciler upgrade-k8s` with the Job's
// arguments, its volumes written to a directory of the pod's) as a process, and writes the pod's
// and the Job's status as they would (termination message, exit code, podFailurePolicy,
// backoffLimit, Complete / Failed conditions).
#include <fcntl.h>
#include <sys/wait.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <thread>

#include "base/env.h"
#include "fmt/chrono.h"
#include "fmt/format.h"
#include "reconciler/clients/kube/http_kube_client.h"
#include "reconciler/clients/kube/kubeconfig.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/operator_checkout.h"
#include "tests/sim/api/kube_jobs.h"

namespace tr::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr auto kJobTestTimeout = 120s;
constexpr char kNamespace[] = "talos-reconciler";
constexpr char kSecret[] = "k8s-talosconfig";

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteText(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::string Rfc3339Now() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z",
                     std::chrono::time_point_cast<std::chrono::seconds>(Env::Default().Now()));
}

bool Finished(const json& job) {
  for (const json& c : job["status"].value("conditions", json::array())) {
    if ((c["type"] == "Complete" || c["type"] == "Failed") && c["status"] == "True") return true;
  }
  return false;
}

// The Job controller and kubelet of the home cluster, one pod at a time, on a thread of its own.
class FakeJobController {
 public:
  FakeJobController(reconciler::kube::KubeClient& kube, fs::path dir,
                    std::map<std::string, fs::path> secrets)
      : kube_(kube), dir_(std::move(dir)), secrets_(std::move(secrets)) {
    thread_ = std::jthread([this](std::stop_token stop) {
      std::mutex mu;
      std::condition_variable_any resync;  // never notified: a controller's period, stoppable
      std::unique_lock lock(mu);
      while (!resync.wait_for(lock, stop, 20ms, [&stop] { return stop.stop_requested(); })) {
        Tick();
      }
      if (running_) running_->process.Signal(SIGKILL);
    });
  }

  void KillRunningPod() { kill_ = true; }  // SIGKILL, as an OOM kill or a node crash would
  // Stops (SIGSTOP) the running process once its log has a line starting with `prefix`, so the
  // progress it shows holds still; Resume() continues it (SIGCONT).
  void PauseAt(std::string prefix) {
    std::lock_guard lock(pause_mu_);
    pause_at_ = std::move(prefix);
  }
  bool paused() const { return paused_; }
  void Resume() { resume_ = true; }
  bool running() const { return running_pid_ > 0; }
  int pods_started() const { return pods_started_; }
  std::string Logs() const {
    std::string out;
    for (int i = 1; i <= pods_started_; ++i) out += ReadText(dir_ / fmt::format("pod-{}.log", i));
    return out;
  }

 private:
  struct Running {
    std::string job, pod;
    gitsource::Subprocess process;
    fs::path termination_log;
    fs::path log;
  };

  std::string JobPath(const std::string& name) const {
    return fmt::format("/apis/batch/v1/namespaces/{}/jobs/{}", kNamespace, name);
  }

  void Tick() {
    if (running_) {
      if (kill_.exchange(false)) running_->process.Signal(SIGKILL);
      PauseOrResume();
      if (std::optional<int> status = running_->process.WaitFor(0ms)) {
        Finish(*status);
        running_.reset();
        running_pid_ = 0;
      }
      return;
    }
    auto list = kube_.GetObject(fmt::format("/apis/batch/v1/namespaces/{}/jobs", kNamespace));
    if (!list.ok()) return;
    for (const json& job : json::parse(*list).value("items", json::array())) {
      if (Finished(job)) continue;
      if (job["status"].value("failed", 0) > job["spec"].value("backoffLimit", 6)) {
        SetJobFailed(job["metadata"]["name"], "BackoffLimitExceeded",
                     "Job has reached the specified backoff limit");
        continue;
      }
      StartPod(job);
      return;
    }
  }

  void PauseOrResume() {
    if (resume_.exchange(false) && paused_.exchange(false)) running_->process.Signal(SIGCONT);
    std::lock_guard lock(pause_mu_);
    if (pause_at_.empty() || ReadText(running_->log).find("\n" + pause_at_) == std::string::npos) {
      return;
    }
    running_->process.Signal(SIGSTOP);
    pause_at_.clear();
    paused_ = true;
  }

  // The pod's files: each volume at <pod dir>/root/<mountPath>, like the container's filesystem.
  std::vector<std::string> Materialize(const json& pod_template, const fs::path& root) {
    const json& spec = pod_template["spec"];
    const json& container = spec["containers"][0];
    std::vector<std::string> mounts;
    for (const json& m : container["volumeMounts"]) {
      const std::string at = m["mountPath"];
      mounts.push_back(at);
      for (const json& v : spec["volumes"]) {
        if (v["name"] != m["name"]) continue;
        if (v.contains("secret")) {
          for (const json& item : v["secret"]["items"]) {
            WriteText(root / at.substr(1) / item["path"].get<std::string>(),
                      ReadText(secrets_.at(v["secret"]["secretName"])));
          }
        }
        for (const json& item :
             v.value("downwardAPI", json::object()).value("items", json::array())) {
          std::string field = item["fieldRef"]["fieldPath"];  // metadata.annotations['key']
          const std::string key =
              field.substr(field.find('\'') + 1, field.rfind('\'') - field.find('\'') - 1);
          WriteText(root / at.substr(1) / item["path"].get<std::string>(),
                    pod_template["metadata"]["annotations"][key].get<std::string>());
        }
      }
    }
    std::vector<std::string> argv = {BuiltBinary("reconciler/talos-reconciler").string()};
    const std::string termination = container["terminationMessagePath"];
    fs::create_directories((root / termination.substr(1)).parent_path());
    for (const json& a : container["args"]) {
      std::string arg = a;
      bool path = arg == termination;
      for (const std::string& m : mounts) path = path || m.starts_with(arg) || arg.starts_with(m);
      argv.push_back(path ? (root / arg.substr(1)).string() : arg);
    }
    return argv;
  }

  void StartPod(const json& job) {
    const std::string name = job["metadata"]["name"];
    const json& tmpl = job["spec"]["template"];
    const int n = pods_started_ + 1;
    const fs::path log = dir_ / fmt::format("pod-{}.log", n);
    json annotations = tmpl["metadata"]["annotations"];
    annotations[sim::kLogFileAnnotation] = log.string();  // the simulator serves it as pods/log
    json pod = {{"metadata",
                 {{"generateName", name + "-"},
                  {"labels", tmpl["metadata"]["labels"]},
                  {"annotations", annotations},
                  {"ownerReferences",
                   {{{"apiVersion", "batch/v1"},
                     {"kind", "Job"},
                     {"name", name},
                     {"uid", job["metadata"]["uid"]},
                     {"controller", true},
                     {"blockOwnerDeletion", true}}}}}},
                {"spec", tmpl["spec"]}};
    auto created =
        kube_.CreateObject(fmt::format("/api/v1/namespaces/{}/pods", kNamespace), pod.dump());
    if (!created.ok()) return;
    const std::string pod_name = json::parse(*created)["metadata"]["name"];
    pods_started_ = n;
    const fs::path root = dir_ / fmt::format("pod-{}", n);
    SpawnArgs spawn{Materialize(tmpl, root), log};
    const int log_fd = ::open(spawn.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    gitsource::SpawnOptions options;
    options.argv = spawn.argv;
    options.stdout_fd = log_fd;
    options.stderr_fd = log_fd;
    auto process = gitsource::Subprocess::Spawn(options);
    ::close(log_fd);
    if (!process.ok()) return;
    running_pid_ = process->pid();
    const std::string termination = tmpl["spec"]["containers"][0]["terminationMessagePath"];
    running_.emplace(
        Running{name, pod_name, *std::move(process), root / termination.substr(1), log});
    json running = {{"phase", "Running"},
                    {"containerStatuses",
                     {{{"name", "upgrade-k8s"},
                       {"ready", true},
                       {"restartCount", 0},
                       {"state", {{"running", {{"startedAt", Rfc3339Now()}}}}}}}}};
    (void)kube_.ReplaceObject(
        fmt::format("/api/v1/namespaces/{}/pods/{}/status", kNamespace, pod_name),
        json{{"status", running}}.dump());
    UpdateJobStatus(name, [](json& status) {
      status["active"] = 1;
      if (!status.contains("startTime")) status["startTime"] = Rfc3339Now();
    });
  }

  struct SpawnArgs {
    std::vector<std::string> argv;
    fs::path log;
  };

  void Finish(int wait_status) {
    const int exit_code =
        WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
    const std::string message = ReadText(running_->termination_log);
    const std::string pod_path =
        fmt::format("/api/v1/namespaces/{}/pods/{}", kNamespace, running_->pod);
    json status = {{"phase", exit_code == 0 ? "Succeeded" : "Failed"},
                   {"containerStatuses",
                    {{{"name", "upgrade-k8s"},
                      {"ready", false},
                      {"restartCount", 0},
                      {"state",
                       {{"terminated",
                         {{"exitCode", exit_code},
                          {"reason", exit_code == 0 ? "Completed" : "Error"},
                          {"message", message},
                          {"finishedAt", Rfc3339Now()}}}}}}}}};
    (void)kube_.ReplaceObject(pod_path + "/status", json{{"status", status}}.dump());
    auto job_text = kube_.GetObject(JobPath(running_->job));
    if (!job_text.ok()) return;
    const json job = json::parse(*job_text);
    if (exit_code == 0) {
      UpdateJobStatus(running_->job, [](json& s) {
        s["active"] = 0;
        s["succeeded"] = 1;
        s["completionTime"] = Rfc3339Now();
        s["conditions"] = {
            {{"type", "SuccessCriteriaMet"}, {"status", "True"}, {"reason", "CompletionsReached"}},
            {{"type", "Complete"}, {"status", "True"}, {"reason", "CompletionsReached"}}};
      });
      return;
    }
    UpdateJobStatus(running_->job, [](json& s) {
      s["active"] = 0;
      s["failed"] = s.value("failed", 0) + 1;
    });
    for (const json& rule : job["spec"]["podFailurePolicy"].value("rules", json::array())) {
      const json codes = rule.value("onExitCodes", json::object());
      const json values = codes.value("values", json::array());
      if (rule["action"] == "FailJob" && codes.value("operator", "") == "In" &&
          std::find(values.begin(), values.end(), exit_code) != values.end()) {
        SetJobFailed(running_->job, "PodFailurePolicy",
                     fmt::format("Container upgrade-k8s for pod {}/{} failed with exit code {} "
                                 "matching FailJob rule at index 0",
                                 kNamespace, running_->pod, exit_code));
        return;
      }
    }
  }

  void SetJobFailed(const std::string& job, const std::string& reason, const std::string& message) {
    UpdateJobStatus(job, [&](json& s) {
      s["conditions"] = {
          {{"type", "FailureTarget"}, {"status", "True"}, {"reason", reason}},
          {{"type", "Failed"}, {"status", "True"}, {"reason", reason}, {"message", message}}};
    });
  }

  // Read, change and PUT the status subresource (with the resourceVersion read).
  void UpdateJobStatus(const std::string& name, const std::function<void(json&)>& change) {
    auto text = kube_.GetObject(JobPath(name));
    if (!text.ok()) return;
    json job = json::parse(*text);
    change(job["status"]);
    (void)kube_.ReplaceObject(JobPath(name) + "/status", job.dump());
  }

  reconciler::kube::KubeClient& kube_;
  const fs::path dir_;
  const std::map<std::string, fs::path> secrets_;
  std::optional<Running> running_;  // the controller thread's
  std::atomic<bool> kill_{false};
  std::mutex pause_mu_;
  std::string pause_at_;  // under pause_mu_
  std::atomic<bool> paused_{false}, resume_{false};
  std::atomic<pid_t> running_pid_{0};
  std::atomic<int> pods_started_{0};
  std::jthread thread_;  // last: stopped and joined first
};

class KubernetesUpgradeJobTest : public E2eTest {
 protected:
  // A 1+2 cluster "k8s" on Kubernetes 1.34.1, the home cluster, the daemon in job mode, and
  // the Job controller.
  void StartJobMode() {
    E2E_ASSERT_OK(world().StartFleet(
        {MakeCluster("k8s", 1, 2, "1.12.0", "1.34.1"), MakeCluster("home", 1, 0, "1.12.0")},
        {.time_scale = 0.05}));
    world().PushProfiles({{"k8s", AtTalos("1.12.0", {}, "1.34.1")}}, "initial profile");
    const fs::path kubeconfig = world().sim().state_dir() / "home" / "kubeconfig";
    E2E_ASSERT_OK(world().StartDaemon([&](DaemonOptions& o) {
      o.extra_args = {"--kubernetes-upgrade-mode",
                      "job",
                      "--kubeconfig",
                      kubeconfig.string(),
                      "--kubernetes-upgrade-job-namespace",
                      kNamespace,
                      "--kubernetes-upgrade-job-image",
                      "talos-reconciler:test",
                      "--kubernetes-upgrade-job-secret",
                      std::string("k8s=") + kSecret};
    }));
    E2E_ASSERT_OK(world().WaitForReady("k8s", "1.12.0", "", kJobTestTimeout).status());
    auto credentials = reconciler::kube::ParseKubeconfig(ReadText(kubeconfig));
    E2E_ASSERT_OK(credentials.status());
    auto client = reconciler::kube::NewHttpKubeClient(*credentials, Env::Default());
    E2E_ASSERT_OK(client.status());
    kube_ = *std::move(client);
    since_ = LastSeq(world().Journal());
    controller_.emplace(*kube_, dir_ / "jobs",
                        std::map<std::string, fs::path>{
                            {kSecret, world().sim().state_dir() / "k8s" / "talosconfig"}});
  }

  // ApplyConfiguration calls per node of "k8s", and Jobs created on "home", since the start.
  std::map<std::string, int> Applies() {
    std::map<std::string, int> applies;
    for (const auto& line : world().Journal()) {
      if (line.seq > since_ && line.cluster == "k8s" && line.call && line.code == "OK" &&
          line.what.ends_with("/ApplyConfiguration")) {
        ++applies[line.node];
      }
    }
    return applies;
  }
  int JobsCreated() {
    int created = 0;
    const std::string post = fmt::format("kube:POST /apis/batch/v1/namespaces/{}/jobs", kNamespace);
    for (const auto& line : world().Journal()) {
      if (line.cluster == "home" && line.call && line.what == post && line.code == "201") ++created;
    }
    return created;
  }
  int TotalApplies() {
    int total = 0;
    for (const auto& [node, n] : Applies()) total += n;
    return total;
  }
  // Ready on Kubernetes 1.35.0 with `commit`; each component patched exactly once.
  // `jobs`: how many Jobs were created for it (a retry after a failed one makes two).
  void ExpectUpgradedOnce(const std::string& commit, int jobs = 1) {
    E2E_ASSERT_OK(
        world().WaitForKubernetesReady("k8s", "1.35.0", commit, kJobTestTimeout).status());
    const std::map<std::string, int> applies = Applies();
    for (const auto& cp : world().sim().cluster("k8s").ControlPlaneNames()) {
      // kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, kubelet
      EXPECT_EQ(applies.at(cp), 5) << cp;
    }
    for (const auto& w : world().sim().cluster("k8s").WorkerNames()) {
      EXPECT_EQ(applies.at(w), 1) << w;
    }
    EXPECT_EQ(JobsCreated(), jobs);
    // The nodes may show the new version while the Job still syncs the manifests: it then
    // completes (deleted by the daemon once it saw that, else left to its TTL).
    EXPECT_TRUE(world().WaitUntil(30s, [&] {
      auto job = kube_->GetObject(
          fmt::format("/apis/batch/v1/namespaces/{}/jobs/k8s-upgrade-k8s-v1-35-0", kNamespace));
      return job.ok() ? Finished(json::parse(*job)) : absl::IsNotFound(job.status());
    })) << controller_->Logs();
  }

  std::unique_ptr<reconciler::kube::KubeClient> kube_;
  std::optional<FakeJobController> controller_;
  uint64_t since_ = 0;
};

// The last "<phase> N/M" of the progress lines in `log`.
std::string LastProgress(const std::string& log) {
  static const std::regex kLine(R"(^([a-z -]+ [0-9]+/[0-9]+): )", std::regex::multiline);
  std::string last;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), kLine); it != std::sregex_iterator();
       ++it) {
    last = (*it)[1];
  }
  return last;
}

TEST_F(KubernetesUpgradeJobTest, JobCompletesAfterItsPodIsKilledWithNothingPatchedTwice) {
  StartJobMode();
  controller_->PauseAt("kubelets 1/");
  const std::string commit =
      world().PushProfiles({{"k8s", AtTalos("1.12.0", {}, "1.35.0")}}, "k8s: Kubernetes 1.35.0");
  // While the Job runs, the status carries the progress of its pod's log (pods/log).
  ASSERT_TRUE(world().WaitUntil(60s, [&] { return controller_->paused(); }))
      << world().Diagnostics() << controller_->Logs();
  const std::string progress = LastProgress(controller_->Logs());
  ASSERT_FALSE(progress.empty()) << controller_->Logs();  // "kubelets 1/3", or a step further
  core::ClusterStatus upgrading;
  E2E_ASSERT_OK_AND_ASSIGN(
      upgrading, world().WaitForStatus(
                     "k8s",
                     [&](const core::ClusterStatus& s) {
                       return s.phase == core::ClusterPhase::kUpgradingKubernetes &&
                              s.message.find("Job k8s-upgrade-k8s-v1-35-0 running, attempt 1: " +
                                             progress) != std::string::npos;
                     },
                     kJobTestTimeout));
  controller_->Resume();
  ASSERT_TRUE(world().WaitUntil(60s, [&] { return controller_->running() && TotalApplies() >= 2; }))
      << world().Diagnostics() << controller_->Logs();
  controller_->KillRunningPod();
  ExpectUpgradedOnce(commit);
  EXPECT_EQ(controller_->pods_started(), 2) << controller_->Logs();
}

TEST_F(KubernetesUpgradeJobTest, RestartedDaemonAdoptsTheRunningJob) {
  StartJobMode();
  const std::string commit =
      world().PushProfiles({{"k8s", AtTalos("1.12.0", {}, "1.35.0")}}, "k8s: Kubernetes 1.35.0");
  ASSERT_TRUE(world().WaitUntil(60s, [&] { return controller_->running() && TotalApplies() >= 1; }))
      << world().Diagnostics() << controller_->Logs();
  world().daemon().Kill();
  E2E_ASSERT_OK(world().daemon().Start());
  ExpectUpgradedOnce(commit);
  EXPECT_EQ(controller_->pods_started(), 1) << controller_->Logs();
}

TEST_F(KubernetesUpgradeJobTest, FailingComponentFailsTheJobAndNamesComponentAndNode) {
  StartJobMode();
  const std::string worker = world().sim().cluster("k8s").WorkerNames().at(1);
  E2E_ASSERT_OK(world().sim().InjectFault(
      worker, R"({"kind":"image_pull_failure","image":"kubelet:v1.35"})"));
  world().PushProfiles({{"k8s", AtTalos("1.12.0", {}, "1.35.0")}}, "k8s: Kubernetes 1.35.0");
  core::ClusterStatus failed;
  E2E_ASSERT_OK_AND_ASSIGN(failed, world().WaitForStatus(
                                       "k8s",
                                       [&](const core::ClusterStatus& s) {
                                         return s.phase == core::ClusterPhase::kUpgradeFailed;
                                       },
                                       kJobTestTimeout));
  EXPECT_NE(failed.message.find("image pull"), std::string::npos) << failed.message;
  EXPECT_NE(failed.message.find("on " + worker), std::string::npos) << failed.message;
  // Exit code 3 fails the Job at once (podFailurePolicy): one pod, nothing applied, the Job kept.
  EXPECT_EQ(controller_->pods_started(), 1);
  EXPECT_EQ(TotalApplies(), 0);
  EXPECT_EQ(JobsCreated(), 1);
  auto job = kube_->GetObject(
      fmt::format("/apis/batch/v1/namespaces/{}/jobs/k8s-upgrade-k8s-v1-35-0", kNamespace));
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_NE(job->find("PodFailurePolicy"), std::string::npos);

  // The cause fixed, one `retry`: the failed Job is replaced by one for the retry, which
  // finishes the upgrade.
  E2E_ASSERT_OK(world().sim().ClearFaults(worker));
  const OperatorCheckout work(world());
  work.Verb("retry", "k8s", "the registry mirror is back");
  ExpectUpgradedOnce(work.Head(), 2);
}

}  // namespace
}  // namespace tr::e2e
