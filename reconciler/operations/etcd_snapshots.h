// Where the executor keeps etcd snapshots and how many: <dir>/<cluster>-<time>.snapshot, the
// time as RFC 3339 UTC with `-` for `:` (so names sort by time), the directory 0700 and each
// file 0600 (a snapshot holds the cluster's secrets), and only the newest few per cluster.
//
// Thread-compatible: one cluster's snapshots are taken and pruned by one reconcile at a time.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tr::reconciler {

// "<dir>/prod-2026-11-22T02-56-00Z.snapshot".
std::filesystem::path EtcdSnapshotPath(const std::filesystem::path& dir, const std::string& cluster,
                                       std::chrono::system_clock::time_point time);

// Deletes `cluster`'s snapshots in `dir` but the newest `keep` (other clusters' files, and
// files not named as EtcdSnapshotPath names them, are left alone). The deleted files, oldest
// first; Internal naming the file when one cannot be deleted.
absl::StatusOr<std::vector<std::filesystem::path>> PruneEtcdSnapshots(
    const std::filesystem::path& dir, const std::string& cluster, int keep);

}  // namespace tr::reconciler
