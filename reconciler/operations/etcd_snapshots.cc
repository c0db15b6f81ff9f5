#include "reconciler/operations/etcd_snapshots.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <system_error>

#include "core/timestamp.h"
#include "fmt/format.h"

namespace tr::reconciler {
namespace {

constexpr std::string_view kSuffix = ".snapshot";

// Whether `name` is "<cluster>-<stamp>.snapshot" with a stamp shaped "2026-11-22T02-56-00Z":
// the shape, not a prefix, tells cluster "prod"'s files from cluster "prod-eu"'s.
bool IsSnapshotOf(std::string_view name, const std::string& cluster) {
  constexpr std::string_view kShape = "0000-00-00T00-00-00Z";
  if (!name.starts_with(cluster + "-") || !name.ends_with(kSuffix)) return false;
  name.remove_prefix(cluster.size() + 1);
  name.remove_suffix(kSuffix.size());
  if (name.size() != kShape.size()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(name[i])) != 0;
    if (kShape[i] == '0' ? !digit : name[i] != kShape[i]) return false;
  }
  return true;
}

}  // namespace

std::filesystem::path EtcdSnapshotPath(const std::filesystem::path& dir, const std::string& cluster,
                                       std::chrono::system_clock::time_point time) {
  std::string stamp = core::FormatTimestamp(time);
  std::replace(stamp.begin(), stamp.end(), ':', '-');
  return dir / fmt::format("{}-{}{}", cluster, stamp, kSuffix);
}

absl::StatusOr<std::vector<std::filesystem::path>> PruneEtcdSnapshots(
    const std::filesystem::path& dir, const std::string& cluster, int keep) {
  std::vector<std::filesystem::path> snapshots;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (IsSnapshotOf(entry.path().filename().string(), cluster)) snapshots.push_back(entry.path());
  }
  std::sort(snapshots.begin(), snapshots.end());
  const size_t kept = static_cast<size_t>(std::max(keep, 0));
  if (snapshots.size() <= kept) return std::vector<std::filesystem::path>();
  snapshots.resize(snapshots.size() - kept);  // the oldest
  for (const std::filesystem::path& file : snapshots) {
    if (!std::filesystem::remove(file, ec) && ec) {
      return absl::InternalError(
          fmt::format("cannot delete the old etcd snapshot {}: {}", file.string(), ec.message()));
    }
  }
  return snapshots;
}

}  // namespace tr::reconciler
