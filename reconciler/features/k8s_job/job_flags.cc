#include "reconciler/features/k8s_job/job_flags.h"

#include "fmt/format.h"
#include "reconciler/runtime/flags.h"

namespace tr::reconciler::k8s_job {

using flags::Flag;
using flags::Invalid;

void JobFlags::AddFlags(CLI::App& cmd) {
  Flag(cmd, "kubernetes-upgrade-job-image", image,
       "The talos-reconciler image the upgrade Jobs run (needed for --kubernetes-upgrade-mode "
       "job)");
  Flag(cmd, "kubernetes-upgrade-job-namespace", namespace_name,
       "Namespace of the upgrade Jobs (default: the service account's; \"default\" with "
       "--kubeconfig)");
  Flag(cmd, "kubernetes-upgrade-job-secret", secrets,
       "CREDENTIALS=SECRET: the Secret (key talosconfig) a Job mounts for profiles with "
       "spec.credentials CREDENTIALS; repeatable")
      ->delimiter(',');
  flags::DurationFlag(cmd, "kubernetes-upgrade-job-deadline", deadline,
                      "activeDeadlineSeconds of an upgrade Job");
}

absl::Status JobFlags::Finish(bool job_mode) const {
  if (!job_mode) return absl::OkStatus();
  if (image.empty()) {
    return Invalid("kubernetes-upgrade-job-image", "required with --kubernetes-upgrade-mode job");
  }
  for (const std::string& entry : secrets) {
    const size_t eq = entry.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == entry.size()) {
      return Invalid("kubernetes-upgrade-job-secret",
                     fmt::format("\"{}\" is not CREDENTIALS=SECRET", entry));
    }
  }
  if (deadline < std::chrono::minutes(1) || deadline > std::chrono::hours(24 * 7)) {
    return Invalid("kubernetes-upgrade-job-deadline", "1m to 168h");
  }
  return absl::OkStatus();
}

}  // namespace tr::reconciler::k8s_job
