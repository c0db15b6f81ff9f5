#include "reconciler/operations/etcd_snapshots.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>
#include <system_error>

#include "core/timestamp.h"
#include "fmt/format.h"

namespace tr::reconciler {
namespace {

constexpr std::string_view kSuffix = ".snapshot";
constexpr std::string_view kStampShape = "0000-00-00T00-00-00Z";

// The cluster of a file named "<cluster>-<stamp>.snapshot" with a stamp shaped
// "2026-11-22T02-56-00Z"; nullopt for any other name. The shape, not a prefix, tells cluster
// "prod"'s files from cluster "prod-eu"'s.
std::optional<std::string> ClusterOfSnapshot(std::string_view name) {
  if (!name.ends_with(kSuffix)) return std::nullopt;
  name.remove_suffix(kSuffix.size());
  if (name.size() < kStampShape.size() + 2) return std::nullopt;
  const std::string_view stamp = name.substr(name.size() - kStampShape.size());
  for (size_t i = 0; i < stamp.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(stamp[i])) != 0;
    if (kStampShape[i] == '0' ? !digit : stamp[i] != kStampShape[i]) return std::nullopt;
  }
  name.remove_suffix(kStampShape.size());
  if (!name.ends_with('-')) return std::nullopt;
  name.remove_suffix(1);
  return std::string(name);
}

}  // namespace

std::filesystem::path EtcdSnapshotPath(const std::filesystem::path& dir, const std::string& cluster,
                                       std::chrono::system_clock::time_point time) {
  std::string stamp = core::FormatTimestamp(time);
  std::replace(stamp.begin(), stamp.end(), ':', '-');
  return dir / fmt::format("{}-{}{}", cluster, stamp, kSuffix);
}

void EtcdSnapshotIndex::ListLocked() {
  if (listed_) return;
  listed_ = true;
  ++listings_;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    if (std::optional<std::string> cluster = ClusterOfSnapshot(entry.path().filename().string())) {
      files_[*cluster].push_back(entry.path());
    }
  }
  for (auto& [cluster, files] : files_) std::sort(files.begin(), files.end());
}

void EtcdSnapshotIndex::Added(const std::string& cluster, const std::filesystem::path& file) {
  MutexLock lock(mu_);
  if (!listed_) return;  // the listing at the first prune finds it
  std::vector<std::filesystem::path>& files = files_[cluster];
  const auto at = std::lower_bound(files.begin(), files.end(), file);
  if (at == files.end() || *at != file) files.insert(at, file);
}

absl::StatusOr<std::vector<std::filesystem::path>> EtcdSnapshotIndex::Prune(
    const std::string& cluster, int keep) {
  MutexLock lock(mu_);
  ListLocked();
  std::vector<std::filesystem::path>& files = files_[cluster];
  const size_t kept = static_cast<size_t>(std::max(keep, 0));
  std::vector<std::filesystem::path> deleted;
  while (files.size() > kept) {
    std::error_code ec;
    if (!std::filesystem::remove(files.front(), ec) && ec) {
      return absl::InternalError(fmt::format("cannot delete the old etcd snapshot {}: {}",
                                             files.front().string(), ec.message()));
    }
    deleted.push_back(files.front());
    files.erase(files.begin());
  }
  return deleted;
}

int EtcdSnapshotIndex::listings() const {
  MutexLock lock(mu_);
  return listings_;
}

}  // namespace tr::reconciler
