#include "tests/support/e2e/profile_repo.h"

#include <fstream>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status_consistency.h"
#include "core/status_decode.h"
#include "core/status_yaml.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "tests/support/process.h"

namespace tr::e2e {
namespace fs = std::filesystem;
using gitsource::testing::RunCommand;

namespace {

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

}  // namespace

absl::StatusOr<core::ClusterStatus> DecodeStatusFile(const std::string& cluster,
                                                     const std::string& text) {
  auto decoded = core::DecodeClusterStatus(core::ClusterStatusPath(cluster), text);
  if (decoded.ok()) {
    // Every record a test reads must agree with its own node rows.
    const std::vector<std::string> contradictions = core::AggregateContradictions(*decoded.value);
    if (contradictions.empty()) return *std::move(decoded.value);
    return absl::InternalError(fmt::format("{} contradicts its node rows: {}\n---\n{}",
                                           core::ClusterStatusPath(cluster),
                                           fmt::join(contradictions, "; "), text));
  }
  std::string problems;
  for (const auto& d : decoded.diagnostics) problems += d.ToString() + "\n";
  return absl::InternalError(fmt::format("{} does not decode:\n{}---\n{}",
                                         core::ClusterStatusPath(cluster), problems, text));
}

ProfileRepo::ProfileRepo(const fs::path& dir) : upstream_(dir, "fleet"), daemon_(dir) {}

std::string ProfileRepo::Push(const std::map<std::string, std::string>& files,
                              const std::string& message) {
  return upstream_.Commit(files, message);
}

std::string ProfileRepo::Remove(const std::vector<std::string>& paths, const std::string& message) {
  std::vector<std::string> args = {"rm", "--quiet"};
  args.insert(args.end(), paths.begin(), paths.end());
  upstream_.Git(args);
  return upstream_.Commit({}, message);
}

std::string ProfileRepo::StatusTip() const {
  // A loose ref is read directly (cheap while a test polls); packed refs through git.
  std::ifstream loose(bare() / "refs" / "heads" / kStatusBranch);
  std::string tip;
  if (loose && std::getline(loose, tip) && tip.size() == 40) return tip;
  return upstream_.Tip(kStatusBranch);
}

std::string ProfileRepo::StatusText(const std::string& cluster) const {
  const std::string tip = StatusTip();
  if (tip.empty()) return "";
  auto shown = RunCommand({"git", "-C", bare().string(), "show",
                           fmt::format("{}:{}", tip, core::ClusterStatusPath(cluster))});
  return shown.exit_code == 0 ? shown.out : "";
}

absl::StatusOr<core::ClusterStatus> ProfileRepo::Status(const std::string& cluster) {
  const std::string tip = StatusTip();
  if (tip.empty()) return absl::NotFoundError("no status branch yet");
  auto cached = cache_.find(cluster);
  if (cached != cache_.end() && cached->second.first == tip) return cached->second.second;
  auto shown = RunCommand({"git", "-C", bare().string(), "show",
                           fmt::format("{}:{}", tip, core::ClusterStatusPath(cluster))});
  if (shown.exit_code != 0) {
    return absl::NotFoundError(fmt::format("no {} at {}", core::ClusterStatusPath(cluster), tip));
  }
  auto status = DecodeStatusFile(cluster, shown.out);
  if (status.ok()) cache_[cluster] = {tip, *status};
  return status;
}

absl::StatusOr<std::map<std::string, core::ClusterStatus>> ProfileRepo::StatusAll(
    const std::vector<std::string>& clusters) const {
  auto read = StatusChanged(clusters, {});
  if (!read.ok()) return read.status();
  std::map<std::string, core::ClusterStatus> statuses;
  for (auto& [cluster, file] : *read) statuses.emplace(cluster, std::move(file.status));
  return statuses;
}

absl::StatusOr<std::map<std::string, StatusRead>> ProfileRepo::StatusChanged(
    const std::vector<std::string>& clusters,
    const std::map<std::string, std::string>& known) const {
  auto blobs = StatusBlobsChanged(clusters, known);
  if (!blobs.ok()) return blobs.status();
  std::map<std::string, StatusRead> statuses;
  for (auto& [cluster, file] : *blobs) {
    auto status = DecodeStatusFile(cluster, file.text);
    if (!status.ok()) return status.status();
    statuses.emplace(cluster, StatusRead{std::move(file.blob), *std::move(status)});
  }
  return statuses;
}

absl::StatusOr<std::map<std::string, StatusBlob>> ProfileRepo::StatusBlobsChanged(
    const std::vector<std::string>& clusters,
    const std::map<std::string, std::string>& known) const {
  std::map<std::string, StatusBlob> statuses;
  const std::string tip = StatusTip();
  if (tip.empty()) return statuses;
  // The blob ids from one read of the status directory's tree, then the contents of the blobs
  // that changed by id: asking cat-file for "<tip>:<path>" reads that tree again for every
  // file, which at 1,000 clusters took a fifth of the machine a fleet bench shares.
  auto listed = RunCommand({"git", "-C", bare().string(), "ls-tree", "-z", tip,
                            std::string(core::kStatusDirectory) + "/"});
  if (listed.exit_code != 0) return absl::InternalError("git ls-tree: " + listed.err);
  std::map<std::string, std::string> blob_by_path;  // "<mode> blob <id>\t<path>\0" each
  for (size_t at = 0, end; (end = listed.out.find('\0', at)) != std::string::npos; at = end + 1) {
    const std::string_view entry = std::string_view(listed.out).substr(at, end - at);
    const size_t tab = entry.find('\t');
    const size_t id = entry.rfind(' ', tab);
    if (tab == std::string_view::npos || id == std::string_view::npos) continue;
    blob_by_path.emplace(entry.substr(tab + 1), entry.substr(id + 1, tab - id - 1));
  }
  std::vector<std::pair<std::string, std::string>> wanted;  // cluster, blob
  gitsource::testing::RunOptions options;
  for (const auto& cluster : clusters) {
    const auto blob = blob_by_path.find(core::ClusterStatusPath(cluster));
    if (blob == blob_by_path.end()) continue;
    const auto seen = known.find(cluster);
    if (seen != known.end() && seen->second == blob->second) continue;
    wanted.emplace_back(cluster, blob->second);
    options.input += blob->second + "\n";
  }
  if (wanted.empty()) return statuses;
  auto batch = RunCommand({"git", "-C", bare().string(), "cat-file", "--batch"}, options);
  if (batch.exit_code != 0) return absl::InternalError("git cat-file: " + batch.err);
  // Per request: "<id> blob <size>\n<content>\n".
  size_t at = 0;
  for (const auto& [cluster, blob] : wanted) {
    const size_t eol = batch.out.find('\n', at);
    if (eol == std::string::npos) return absl::InternalError("git cat-file: short answer");
    const std::string header = batch.out.substr(at, eol - at);
    at = eol + 1;
    if (!header.starts_with(blob + " blob ")) {
      return absl::InternalError("git cat-file: unexpected " + header);
    }
    const size_t size = std::stoul(header.substr(header.rfind(' ') + 1));
    statuses.emplace(cluster, StatusBlob{blob, batch.out.substr(at, size)});
    at += size + 1;
  }
  return statuses;
}

absl::StatusOr<std::vector<StatusVersion>> ProfileRepo::StatusHistory(
    const std::string& cluster) const {
  if (StatusTip().empty()) return absl::NotFoundError("no status branch yet");
  auto log = RunCommand({"git", "-C", bare().string(), "log", "--reverse", "--format=%H",
                         fmt::format("refs/heads/{}", kStatusBranch), "--",
                         core::ClusterStatusPath(cluster)});
  if (log.exit_code != 0) return absl::InternalError("git log: " + log.err);
  std::vector<StatusVersion> versions;
  std::istringstream commits(log.out);
  std::string commit;
  while (std::getline(commits, commit)) {
    if (commit.empty()) continue;
    auto shown = RunCommand({"git", "-C", bare().string(), "show",
                             fmt::format("{}:{}", commit, core::ClusterStatusPath(cluster))});
    if (shown.exit_code != 0) continue;  // the commit deleted the file
    auto status = DecodeStatusFile(cluster, shown.out);
    if (!status.ok()) return status.status();
    versions.push_back({.commit = Trimmed(commit), .status = *std::move(status)});
  }
  return versions;
}

}  // namespace tr::e2e
