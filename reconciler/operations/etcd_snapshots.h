// Where the executor keeps etcd snapshots and how many: <dir>/<cluster>-<time>.snapshot, the
// time as RFC 3339 UTC with `-` for `:` (so names sort by time), the directory 0700 and each
// file 0600 (a snapshot holds the cluster's secrets), and only the newest few per cluster.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/mutex.h"

namespace tr::reconciler {

// "<dir>/prod-2026-11-22T02-56-00Z.snapshot".
std::filesystem::path EtcdSnapshotPath(const std::filesystem::path& dir, const std::string& cluster,
                                       std::chrono::system_clock::time_point time);

// The snapshots in one directory, by cluster: listed at the first prune, then kept by this
// process, which writes them (the leader: the directory's only writer). Listing the directory
// at every prune made a fleet-wide rollout's pruning grow with the square of its clusters,
// since all clusters' snapshots share the directory.
//
// Thread-safe.
class EtcdSnapshotIndex {
 public:
  explicit EtcdSnapshotIndex(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // `file` (named by EtcdSnapshotPath in this directory) was written for `cluster`.
  void Added(const std::string& cluster, const std::filesystem::path& file);
  // Deletes `cluster`'s snapshots but the newest `keep` (other clusters' files, and files not
  // named as EtcdSnapshotPath names them, are left alone; one deleted meanwhile by someone else
  // is no error). The deleted files, oldest first; Internal naming the file when one cannot be
  // deleted (it stays listed, to be deleted at the next prune).
  absl::StatusOr<std::vector<std::filesystem::path>> Prune(const std::string& cluster, int keep);
  // How many times the directory was listed: once, for tests.
  int listings() const;

 private:
  void ListLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::filesystem::path dir_;
  mutable Mutex mu_;
  bool listed_ ABSL_GUARDED_BY(mu_) = false;
  int listings_ ABSL_GUARDED_BY(mu_) = 0;
  // By cluster, sorted (by time: the names sort so).
  std::map<std::string, std::vector<std::filesystem::path>> files_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler
