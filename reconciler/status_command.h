// `talos-reconciler status`: every cluster's status as the daemon last recorded it on the
// status branch, read through the Git source (no work tree).
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "gitsource/config.h"

namespace tr::reconciler {

struct StatusCommandOptions {
  gitsource::GitSourceConfig git;  // repository, auth and a state directory for the mirror
  std::string status_branch = "talos-reconciler/status";
  bool json = false;
};

// Prints one line per cluster (or a JSON array). 0 on success; 1 when the branch cannot be
// read (the reason on `err`).
int RunStatus(const StatusCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tr::reconciler
