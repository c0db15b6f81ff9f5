#include "reconciler/status_store.h"

#include "core/status_decode.h"
#include "core/status_yaml.h"
#include "fmt/format.h"

namespace tr::reconciler {

absl::StatusOr<std::map<std::string, core::ClusterStatus>> GitStatusStore::LoadAll(
    std::stop_token stop) {
  absl::StatusOr<std::map<std::string, std::string>> files = writer_.ReadLatest(stop);
  if (!files.ok()) return files.status();
  return DecodeStatusFiles(*files);
}

absl::StatusOr<std::map<std::string, core::ClusterStatus>> DecodeStatusFiles(
    const std::map<std::string, std::string>& files) {
  std::map<std::string, core::ClusterStatus> out;
  for (const auto& [path, content] : files) {
    if (!path.ends_with(".yaml")) continue;
    core::Decoded<core::ClusterStatus> status = core::DecodeClusterStatus(path, content);
    if (!status.ok()) {
      return absl::DataLossError(
          fmt::format("cannot read back {}: {}", path, status.diagnostics.front().ToString()));
    }
    out[status.value->cluster] = *std::move(status.value);
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

}  // namespace

absl::Status GitStatusStore::Record(const core::ClusterStatus& status, std::stop_token stop) {
  return writer_.Write(UpdateOf(status), stop).status();
}

absl::Status GitStatusStore::RecordSoon(const core::ClusterStatus& status, std::stop_token) {
  return writer_.Post(UpdateOf(status));
}

}  // namespace tr::reconciler
