// The settings of `--kubernetes-upgrade-mode job` (`--kubernetes-upgrade-job-*`): the image the
// upgrade Jobs run, their namespace, the talosconfig Secrets they mount and their deadline.
// Registered and checked here, used by OpenJobUpgrades.
//
// Values only; thread-compatible.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"

namespace tr::reconciler::k8s_job {

struct JobFlags {
  std::string image;                        // required in job mode
  std::string namespace_name;               // empty: the service account's / "default"
  std::vector<std::string> secrets;         // "credentials=secret-name"
  std::chrono::seconds deadline{2 * 3600};  // activeDeadlineSeconds

  void AddFlags(CLI::App& cmd);
  // With `job_mode`: an image, secrets written CREDENTIALS=SECRET, a deadline of 1m to 168h.
  // InvalidArgument naming the flag.
  absl::Status Finish(bool job_mode) const;
};

}  // namespace tr::reconciler::k8s_job
