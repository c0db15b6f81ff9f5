#include "reconciler/operations/k8s_upgrade/upgrade_runner.h"

#include "base/thread_name.h"
#include "fmt/format.h"
#include "reconciler/operations/k8s_upgrade/upgrade_k8s_command.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler::k8s_upgrade {

InProcessUpgradeRunner::~InProcessUpgradeRunner() {
  std::map<std::string, std::shared_ptr<Task>> tasks;
  {
    MutexLock lock(mu_);
    tasks.swap(tasks_);
  }
  for (auto& [cluster, task] : tasks) {
    task->thread.request_stop();
    if (task->thread.joinable()) task->thread.join();
  }
}

UpgradeTaskStatus InProcessUpgradeRunner::Ensure(const core::ClusterProfile& profile,
                                                 const core::Version& target,
                                                 const core::SupportMatrix& matrix) {
  std::shared_ptr<Task> finished;  // joined outside the lock
  MutexLock lock(mu_);
  std::shared_ptr<Task>& task = tasks_[profile.name];
  const bool retry = task && task->status.state == UpgradeTaskStatus::State::kFailed &&
                     ExitCodeFor(task->status.outcome.status) == kUpgradeRetry;
  const bool new_target = task && task->status.target != target.ToString() &&
                          task->status.state != UpgradeTaskStatus::State::kRunning;
  const bool retry_asked = task && task->status.state == UpgradeTaskStatus::State::kFailed &&
                           task->status.retry_token != profile.retry_token;
  if (!task || retry || new_target || retry_asked) {
    finished = std::move(task);
    task = std::make_shared<Task>();
    Start(*task, profile, target, matrix);
  }
  return task->status;
}

bool InProcessUpgradeRunner::Started(const std::string& cluster, const core::Version& target) {
  MutexLock lock(mu_);
  auto it = tasks_.find(cluster);
  return it != tasks_.end() && it->second->status.target == target.ToString();
}

void InProcessUpgradeRunner::Start(Task& task, const core::ClusterProfile& profile,
                                   const core::Version& target, const core::SupportMatrix& matrix) {
  task.status.target = target.ToString();
  task.status.retry_token = profile.retry_token;
  UpgradeOptions options;
  options.target = target;
  options.matrix = matrix;
  options.poll_interval = options_.poll_interval;
  options.static_pod_timeout = options_.static_pod_timeout;
  options.kubelet_timeout = options_.kubelet_timeout;
  options.prune_manifests = options_.prune_manifests;
  if (options_.may_change) {
    options.before_change = [may_change = options_.may_change, cluster = profile.name] {
      return may_change(cluster);
    };
  }
  for (const core::NodeSpec& n : profile.nodes) {
    options.nodes.push_back({n.name, n.address, n.role == core::NodeRole::kControlPlane});
  }
  Task* t = &task;
  task.thread = std::jthread([this, t, profile, options](std::stop_token stop) {
    NameThisThread("k8s-upgrade");
    auto log = ModuleLogger("k8s-upgrade");
    UpgradeOutcome outcome;
    absl::StatusOr<ClusterClients> clients = clients_.ForProfile(profile);
    if (!clients.ok()) {
      outcome.status = clients.status();
    } else if (!clients->kube) {
      outcome.status = absl::UnavailableError("no admin kubeconfig from any control plane yet");
    } else {
      KubernetesUpgrade upgrade(
          *clients->talos, *clients->kube, env_, options, [&](const UpgradeProgress& p) {
            log->info("cluster={} phase=\"{}\" {}", profile.name, p.phase, p.message);
            if (p.phase == "apply") return;
            MutexLock lock(mu_);
            t->status.progress = fmt::format("{} {}/{}", p.phase, p.done, p.total);
          });
      outcome = upgrade.Run(stop);
    }
    MutexLock lock(mu_);
    t->status.outcome = outcome;
    t->status.state = outcome.status.ok() ? UpgradeTaskStatus::State::kSucceeded
                                          : UpgradeTaskStatus::State::kFailed;
  });
}

}  // namespace tr::reconciler::k8s_upgrade
