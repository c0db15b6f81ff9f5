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

#include "absl/status/statusor.h"
#include "core/status.h"
#include "gitsource/status_writer.h"

namespace tr::reconciler {

class StatusStore {
 public:
  virtual ~StatusStore() = default;
  // The last recorded status of every cluster. DataLoss naming the file when one cannot be
  // read back: acting without its operation in flight could upgrade a node twice.
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

// Decodes status files (path -> content, as on the status branch) by cluster; other files
// are skipped. DataLoss naming the file when one cannot be read back.
absl::StatusOr<std::map<std::string, core::ClusterStatus>> DecodeStatusFiles(
    const std::map<std::string, std::string>& files);

class GitStatusStore final : public StatusStore {
 public:
  explicit GitStatusStore(gitsource::StatusWriter& writer) : writer_(writer) {}
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadAll(std::stop_token stop) override;
  absl::Status Record(const core::ClusterStatus& status, std::stop_token stop) override;
  // Posted to the writer: it goes out with the next status commit.
  absl::Status RecordSoon(const core::ClusterStatus& status, std::stop_token stop) override;

 private:
  gitsource::StatusWriter& writer_;
};

}  // namespace tr::reconciler
