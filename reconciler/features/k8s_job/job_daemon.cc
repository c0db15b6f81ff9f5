#include "reconciler/features/k8s_job/job_daemon.h"

#include "reconciler/clients/kube/lease_endpoint.h"
#include "reconciler/features/k8s_job/job_runner.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler::k8s_job {
namespace {

// The runner with the API client it uses, owned together.
class OwningJobRunner final : public k8s_upgrade::KubernetesUpgradeRunner {
 public:
  OwningJobRunner(std::unique_ptr<kube::KubeClient> kube, JobRunnerOptions options)
      : kube_(std::move(kube)), runner_(*kube_, std::move(options)) {}
  k8s_upgrade::UpgradeTaskStatus Ensure(const core::ClusterProfile& profile,
                                        const core::Version& target,
                                        const core::SupportMatrix& matrix) override {
    return runner_.Ensure(profile, target, matrix);
  }
  bool Started(const std::string& cluster, const core::Version& target) override {
    return runner_.Started(cluster, target);
  }

 private:
  std::unique_ptr<kube::KubeClient> kube_;
  JobUpgradeRunner runner_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<k8s_upgrade::KubernetesUpgradeRunner>> OpenJobUpgrades(
    const JobFlags& flags, const std::filesystem::path& kubeconfig,
    std::chrono::milliseconds poll_interval, Env& env,
    std::function<absl::Status(const std::string& cluster)> may_change, bool prune_manifests) {
  kube::HttpKubeClientOptions http;
  http.connect_timeout = std::chrono::seconds(5);
  http.request_timeout = std::chrono::seconds(10);
  absl::StatusOr<lease::LeaseEndpoint> endpoint =
      lease::OpenLeaseEndpoint(kubeconfig, http, env);
  if (!endpoint.ok()) return endpoint.status();
  JobRunnerOptions options;
  options.job.namespace_name =
      flags.namespace_name.empty() ? endpoint->namespace_name : flags.namespace_name;
  options.job.image = flags.image;
  options.job.active_deadline = flags.deadline;
  options.job.poll_interval = std::min(poll_interval, std::chrono::milliseconds(1000));
  options.job.prune_manifests = prune_manifests;
  for (const std::string& entry : flags.secrets) {
    const size_t eq = entry.find('=');
    options.secrets[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  options.may_change = std::move(may_change);
  ModuleLogger("k8s-upgrade")
      ->info("step=job-mode namespace={} image={}", LogValue(options.job.namespace_name),
             LogValue(options.job.image));
  return std::make_unique<OwningJobRunner>(std::move(endpoint->client), std::move(options));
}

}  // namespace tr::reconciler::k8s_job
