#include "reconciler/cluster_clients.h"

#include "fmt/format.h"
#include "reconciler/kube/http_kube_client.h"
#include "reconciler/kube/kubeconfig.h"
#include "reconciler/talos/talosconfig.h"
#include "reconciler/talos/tar_gz.h"

namespace tr::reconciler {
namespace {

std::string CacheKey(const core::ClusterProfile& profile) {
  return profile.credentials + "|" + fmt::format("{}", fmt::join(profile.endpoints, ","));
}

absl::StatusOr<std::unique_ptr<talos::TalosClient>> MakeTalosClient(
    const std::filesystem::path& file, const core::ClusterProfile& profile,
    const talos::GrpcTalosClientOptions& options) {
  absl::StatusOr<talos::TalosConfig> config = talos::LoadTalosConfig(file);
  if (!config.ok()) {
    return absl::FailedPreconditionError(fmt::format("credentials {}: {}", profile.credentials,
                                                     std::string(config.status().message())));
  }
  absl::StatusOr<talos::TalosContext> context = config->Context();
  if (!context.ok()) {
    return absl::FailedPreconditionError(fmt::format("credentials {}: {}", profile.credentials,
                                                     std::string(context.status().message())));
  }
  // The profile's endpoints are the desired state; the talosconfig's are only a default.
  if (!profile.endpoints.empty()) context->endpoints.clear();
  for (const std::string& text : profile.endpoints) {
    absl::StatusOr<talos::Endpoint> endpoint = talos::ParseEndpoint(text);
    if (!endpoint.ok())
      return absl::FailedPreconditionError(std::string(endpoint.status().message()));
    context->endpoints.push_back(*endpoint);
  }
  absl::StatusOr<std::unique_ptr<talos::TalosClient>> client =
      talos::NewGrpcTalosClient(*context, options);
  if (!client.ok()) return absl::FailedPreconditionError(std::string(client.status().message()));
  return client;
}

}  // namespace

std::shared_ptr<kube::KubeClient> TalosconfigClientFactory::FetchKube(
    const core::ClusterProfile& profile, talos::TalosClient& talos) {
  for (const core::NodeSpec& node : profile.nodes) {
    if (node.role != core::NodeRole::kControlPlane) continue;
    absl::StatusOr<std::string> tarball = talos.Kubeconfig(node.address);
    if (!tarball.ok()) continue;
    absl::StatusOr<std::string> yaml = talos::ExtractFileFromTarGz(*tarball, "kubeconfig");
    if (!yaml.ok()) continue;
    absl::StatusOr<kube::KubeCredentials> credentials = kube::ParseKubeconfig(*yaml);
    if (!credentials.ok()) continue;
    absl::StatusOr<std::unique_ptr<kube::KubeClient>> client =
        kube::NewHttpKubeClient(*credentials);
    if (client.ok()) return std::move(*client);
  }
  return nullptr;
}

absl::StatusOr<ClusterClients> TalosconfigClientFactory::ForProfile(
    const core::ClusterProfile& profile) {
  MutexLock lock(mu_);
  Entry& entry = by_cluster_[profile.name];
  if (entry.key != CacheKey(profile) || !entry.clients.talos) {
    absl::StatusOr<std::unique_ptr<talos::TalosClient>> talos =
        MakeTalosClient(credentials_dir_ / profile.credentials / "talosconfig", profile, options_);
    if (!talos.ok()) return talos.status();
    entry = {CacheKey(profile), {std::shared_ptr<talos::TalosClient>(std::move(*talos)), nullptr}};
  }
  if (!entry.clients.kube) entry.clients.kube = FetchKube(profile, *entry.clients.talos);
  return entry.clients;
}

}  // namespace tr::reconciler
