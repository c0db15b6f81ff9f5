// Where cluster status lives: `status/<cluster>.yaml` on the status branch. The reconciler
// reads every cluster's last status once at start-up (to resume an operation in flight) and
// records each change; a record returns only once pushed, so an operation written down
// before a node is called survives any crash after it.
//
// Thread-safe.
#pragma once

#include <map>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/status.h"
#include "gitsource/status_writer.h"
#include "reconciler/runtime/metrics.h"

namespace tr::reconciler {

class StatusStore {
 public:
  virtual ~StatusStore() = default;
  // The last recorded status of every cluster. A file that cannot be read back is skipped
  // with a warning (DecodeStatusFiles); its cluster then starts without memory, as on a
  // first start, planned from what its nodes run: anyone who can push to the branch could
  // otherwise keep the reconciler from starting.
  virtual absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadAll(
      std::stop_token stop) = 0;
  // Records `status` durably (coalesced with concurrent records into one commit).
  virtual absl::Status Record(const core::ClusterStatus& status, std::stop_token stop) = 0;
  // Records `status`, which differs from the last recorded one only in what it reports
  // (core::OnlyReportDiffers), without waiting for the push: nothing resumes from it, so a crash
  // or a failed push that loses it loses nothing a restart needs. By default, as Record.
  virtual absl::Status RecordSoon(const core::ClusterStatus& status, std::stop_token stop) {
    return Record(status, stop);
  }
};

// Aborted: the status branch refused `cluster`'s record because another replica claimed the
// cluster since (the writer's guard, reconciler/features/lease/fencing.h); `why` says whose claim.
absl::Status FenceRefusedError(const std::string& cluster, const std::string& why);
bool IsFenceRefused(const absl::Status& status);

struct DecodedStatuses {
  std::map<std::string, core::ClusterStatus> statuses;  // by cluster
  // What the branch holds but no cluster's status came from: the reader's skips, plus
  // "undecodable" (not a status file), "name_mismatch" (status/<a>.yaml says cluster b),
  // "no_cluster" (the name is no valid cluster name, or the path is no status/<name>.yaml).
  std::vector<gitsource::SkippedStatusFile> skipped;
};

// Decodes status files (as on the status branch) by cluster. Files that are not a status of
// the cluster their name says are skipped, never fatal: anyone who can push to the branch
// could otherwise keep the reconciler from starting.
DecodedStatuses DecodeStatusFiles(const gitsource::StatusFiles& files);

class GitStatusStore final : public StatusStore {
 public:
  // Each skipped file is logged (warn) and counted in `metrics` (when not null) on every read.
  explicit GitStatusStore(gitsource::StatusWriter& writer, Metrics* metrics = nullptr)
      : writer_(writer), metrics_(metrics) {}
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadAll(std::stop_token stop) override;
  absl::Status Record(const core::ClusterStatus& status, std::stop_token stop) override;
  // Posted to the writer: it goes out with the next status commit.
  absl::Status RecordSoon(const core::ClusterStatus& status, std::stop_token stop) override;

 private:
  gitsource::StatusWriter& writer_;
  Metrics* const metrics_;
};

}  // namespace tr::reconciler
