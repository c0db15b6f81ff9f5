// `talos-reconciler status`: every cluster's status as the daemon last recorded it on the
// status branch, read through the Git source (no work tree).
#pragma once

#include <chrono>
#include <filesystem>
#include <ostream>
#include <string>

#include "reconciler/runtime/git_flags.h"

namespace tr::reconciler {

// The repository, auth, TLS trust and limits (as `run` takes them) and a mirror directory.
struct StatusCommandOptions : GitFlags {
  std::string status_branch = "talos-reconciler/status";
  std::string cluster;          // only this cluster; empty: all
  std::string output = "text";  // text (a table), json, yaml or markdown
  bool watch = false;           // print again whenever the status changes, until interrupted
  std::chrono::seconds watch_interval{5};
};

// Prints a table (CLUSTER PHASE TALOS KUBERNETES PROGRESS REVISION AGE MESSAGE, each gate's
// last answer under its cluster) — for one named cluster its full status instead
// (status_detail.h: nodes, the step in flight, the failure, the history) —, JSON or YAML in
// core/cluster_report.h's shape (the one `plan` uses), or a Markdown table. Without
// `git.state_dir` the mirror lives in a temporary directory removed at the end. 0 on success;
// 1 when the branch cannot be read or does not exist, or the cluster has no status (the reason
// on `err`).
int RunStatus(const StatusCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tr::reconciler
