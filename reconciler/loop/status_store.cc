#include "reconciler/loop/status_store.h"

#include "absl/strings/cord.h"
#include "core/names.h"
#include "core/status_decode.h"
#include "core/status_yaml.h"
#include "fmt/format.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler {

namespace {

// The cluster `path` names ("status/<cluster>.yaml"); empty when it names none.
std::string ClusterOfPath(const std::string& path) {
  constexpr std::string_view kPrefix = "status/", kSuffix = ".yaml";
  if (!path.starts_with(kPrefix) || !path.ends_with(kSuffix)) return "";
  const std::string name =
      path.substr(kPrefix.size(), path.size() - kPrefix.size() - kSuffix.size());
  return core::CheckDns1123Label(name).ok() ? name : "";
}

}  // namespace

absl::StatusOr<std::map<std::string, core::ClusterStatus>> GitStatusStore::LoadAll(
    std::stop_token stop) {
  absl::StatusOr<gitsource::StatusFiles> files = writer_.ReadLatest(stop);
  if (!files.ok()) {
    // Logged by the caller, once per read; counted here as every file of the tree skipped.
    if (metrics_ != nullptr && gitsource::IsStatusTreeOverBudget(files.status())) {
      metrics_->status_files_skipped.Inc("too_many");
    }
    return files.status();
  }
  DecodedStatuses decoded = DecodeStatusFiles(*files);
  static const auto log = ModuleLogger("status");
  for (const gitsource::SkippedStatusFile& skipped : decoded.skipped) {
    log->warn("step=read-status file={} outcome=skipped reason={} detail={}",
              LogValue(skipped.path), skipped.reason, LogValue(skipped.detail));
    if (metrics_ != nullptr) metrics_->status_files_skipped.Inc(skipped.reason);
  }
  return std::move(decoded.statuses);
}

DecodedStatuses DecodeStatusFiles(const gitsource::StatusFiles& files) {
  DecodedStatuses out;
  out.skipped = files.skipped;
  for (const auto& [path, content] : files.files) {
    if (!path.ends_with(".yaml")) continue;
    const std::string cluster = ClusterOfPath(path);
    if (cluster.empty()) {
      out.skipped.push_back({path, "no_cluster", "not status/<cluster>.yaml with a valid name"});
      continue;
    }
    core::Decoded<core::ClusterStatus> status = core::DecodeClusterStatus(path, content);
    if (!status.ok()) {
      out.skipped.push_back({path, "undecodable",
                             status.diagnostics.empty() ? "cannot be decoded"
                                                        : status.diagnostics.front().ToString()});
      continue;
    }
    if (status.value->cluster != cluster) {
      out.skipped.push_back(
          {path, "name_mismatch",
           fmt::format("the file is named for {} but says cluster {}", cluster,
                       status.value->cluster.substr(0, 64))});
      continue;
    }
    out.statuses[cluster] = *std::move(status.value);
  }
  return out;
}

namespace {

gitsource::StatusUpdate UpdateOf(const core::ClusterStatus& status) {
  gitsource::StatusUpdate update;
  update.files[core::ClusterStatusPath(status.cluster)] = core::RenderStatusYaml(status);
  update.message = fmt::format("{}: {} {}", status.cluster, core::ClusterPhaseName(status.phase),
                               status.talos.progress);
  return update;
}

constexpr char kFenceRefusedPayload[] = "talos-reconciler/fence-refused";

}  // namespace

absl::Status FenceRefusedError(const std::string& cluster, const std::string& why) {
  absl::Status status =
      absl::AbortedError(fmt::format("{}'s status was not recorded: {}", cluster, why));
  status.SetPayload(kFenceRefusedPayload, absl::Cord(cluster));
  return status;
}

bool IsFenceRefused(const absl::Status& status) {
  return status.GetPayload(kFenceRefusedPayload).has_value();
}

absl::Status GitStatusStore::Record(const core::ClusterStatus& status, std::stop_token stop) {
  absl::StatusOr<gitsource::StatusCommit> written = writer_.Write(UpdateOf(status), stop);
  if (!written.ok()) return written.status();
  const auto refused = written->refused.find(core::ClusterStatusPath(status.cluster));
  if (refused != written->refused.end()) return FenceRefusedError(status.cluster, refused->second);
  return absl::OkStatus();
}

absl::Status GitStatusStore::RecordSoon(const core::ClusterStatus& status, std::stop_token) {
  return writer_.Post(UpdateOf(status));
}

}  // namespace tr::reconciler
