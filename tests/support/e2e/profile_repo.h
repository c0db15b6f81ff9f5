// The profile repository of an end-to-end test: a bare repository served by `git daemon` on
// 127.0.0.1 (an ephemeral port the test owns from the start; pushes enabled, so the reconciler
// can write its status branch), a work clone to push profile changes from, and readers for the
// status files the reconciler writes on its status branch (`status/<cluster>.yaml`, decoded with
// core's status decoder, at the branch tip or through the branch's history).
//
// Thread-compatible: one thread owns a ProfileRepo.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/status.h"
#include "tests/support/repos.h"
#include "tests/support/servers.h"

namespace tr::e2e {

inline constexpr const char* kStatusBranch = "talos-reconciler/status";

// One commit of the status branch with the cluster's status in it.
struct StatusVersion {
  std::string commit;
  core::ClusterStatus status;
};

// A status file at the tip: its blob id and what it decodes to.
struct StatusRead {
  std::string blob;
  core::ClusterStatus status;
};

// A status file at the tip, undecoded: its blob id and its text.
struct StatusBlob {
  std::string blob;
  std::string text;
};

// The text of status/<cluster>.yaml decoded; Internal when it does not decode or contradicts its
// own node rows (the message has the diagnostics and the text).
absl::StatusOr<core::ClusterStatus> DecodeStatusFile(const std::string& cluster,
                                                     const std::string& text);

class ProfileRepo {
 public:
  // Creates <dir>/fleet.git and <dir>/fleet-work and serves <dir> with git daemon.
  explicit ProfileRepo(const std::filesystem::path& dir);

  std::string url() const { return daemon_.Url("fleet"); }  // git://127.0.0.1:<port>/fleet.git
  const std::filesystem::path& bare() const { return upstream_.bare(); }
  std::filesystem::path refs_dir() const { return upstream_.bare() / "refs"; }

  // Writes `files` (repository path -> content) into the work tree, commits them on main and
  // pushes; returns the new commit id.
  std::string Push(const std::map<std::string, std::string>& files, const std::string& message);
  // Feeds `stream` to git fast-import in the bare repository (refs it names are forced).
  void FastImport(const std::string& stream) const { upstream_.FastImport(stream); }
  // Removes `paths`, commits and pushes; returns the new commit id.
  std::string Remove(const std::vector<std::string>& paths, const std::string& message);

  // The status branch's commit id; empty while it does not exist.
  std::string StatusTip() const;
  // status/<cluster>.yaml at the status branch tip: NotFound while it has none; Internal when
  // it does not decode (the message has the diagnostics and the text).
  absl::StatusOr<core::ClusterStatus> Status(const std::string& cluster);
  // The raw text of status/<cluster>.yaml at the tip; empty when there is none.
  std::string StatusText(const std::string& cluster) const;
  // Every status/<name>.yaml at the tip, decoded, for these clusters (one git process; a
  // cluster without a file is left out). Internal when one does not decode.
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> StatusAll(
      const std::vector<std::string>& clusters) const;
  // As StatusAll, with each file's blob id, leaving out (not decoding) a cluster whose file is
  // still the blob `known` holds for it: a waiter over many clusters decodes only what changed.
  absl::StatusOr<std::map<std::string, StatusRead>> StatusChanged(
      const std::vector<std::string>& clusters,
      const std::map<std::string, std::string>& known) const;
  // As StatusChanged, undecoded: for a waiter that decodes only the files a look at their text
  // says may be what it waits for (decoding every changed file took a tenth of the machine a
  // 1,000-cluster bench shares).
  absl::StatusOr<std::map<std::string, StatusBlob>> StatusBlobsChanged(
      const std::vector<std::string>& clusters,
      const std::map<std::string, std::string>& known) const;
  // Every commit of the status branch that changed status/<cluster>.yaml, oldest first.
  absl::StatusOr<std::vector<StatusVersion>> StatusHistory(const std::string& cluster) const;

 private:
  gitsource::testing::UpstreamRepo upstream_;
  gitsource::testing::GitDaemon daemon_;
  // Decoded status per cluster at the tip it was read from.
  std::map<std::string, std::pair<std::string, core::ClusterStatus>> cache_;
};

}  // namespace tr::e2e
