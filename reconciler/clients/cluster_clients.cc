#include "reconciler/clients/cluster_clients.h"

#include "base/thread_name.h"
#include "fmt/format.h"
#include "reconciler/clients/kube/http_kube_client.h"
#include "reconciler/clients/kube/kubeconfig.h"
#include "reconciler/clients/talos/talosconfig.h"
#include "reconciler/clients/talos/tar_gz.h"
#include "reconciler/clients/talos/tls_material.h"

namespace tr::reconciler {
namespace {

// The file a profile's credentials are in, and the context there that is the cluster's.
struct Credential {
  std::filesystem::path file;
  talos::TalosContext context;
};

// "credentials <name>: <file>: contexts.<context>: <what>", FailedPrecondition.
absl::Status CredentialError(const core::ClusterProfile& profile, const Credential& c,
                             const absl::Status& what) {
  return absl::FailedPreconditionError(fmt::format("credentials {}: {}: contexts.{}: {}",
                                                   profile.credentials, c.file.string(),
                                                   c.context.name, std::string(what.message())));
}

// Reads the profile's talosconfig context and checks its material, before anything is dialled:
// gRPC would report damaged material only as unreachable nodes.
absl::StatusOr<Credential> LoadCredential(const TalosCredentials& credentials,
                                          const core::ClusterProfile& profile) {
  const bool one_file = !credentials.talosconfig.empty();
  Credential c;
  c.file =
      one_file ? credentials.talosconfig : credentials.dir / profile.credentials / "talosconfig";
  absl::StatusOr<talos::TalosConfig> config = talos::LoadTalosConfig(c.file);
  if (!config.ok()) {
    return absl::FailedPreconditionError(fmt::format("credentials {}: {}", profile.credentials,
                                                     std::string(config.status().message())));
  }
  absl::StatusOr<talos::TalosContext> context =
      config->Context(one_file ? std::string_view(profile.credentials) : std::string_view());
  if (!context.ok()) {
    return absl::FailedPreconditionError(fmt::format("credentials {}: {}", profile.credentials,
                                                     std::string(context.status().message())));
  }
  c.context = *std::move(context);
  if (absl::Status s = talos::CheckTlsMaterial(c.context); !s.ok()) {
    return CredentialError(profile, c, s);
  }
  // The profile's endpoints are the desired state; the talosconfig's are only a default.
  if (!profile.endpoints.empty()) c.context.endpoints.clear();
  for (const std::string& text : profile.endpoints) {
    absl::StatusOr<talos::Endpoint> endpoint = talos::ParseEndpoint(text);
    if (!endpoint.ok())
      return absl::FailedPreconditionError(std::string(endpoint.status().message()));
    c.context.endpoints.push_back(*endpoint);
  }
  return c;
}

// The talosconfig is read at each (re)creation, so a rotated Secret applies without a restart.
absl::StatusOr<std::unique_ptr<talos::TalosClient>> MakeTalosClient(
    const TalosCredentials& credentials, const core::ClusterProfile& profile,
    const talos::GrpcTalosClientOptions& options, Env& env,
    const TalosconfigClientFactory::CertificateSeen& on_certificate) {
  absl::StatusOr<Credential> credential = LoadCredential(credentials, profile);
  if (!credential.ok()) return credential.status();
  if (on_certificate) {
    // Readable: LoadCredential checked the material.
    absl::StatusOr<std::chrono::system_clock::time_point> not_after =
        talos::CertificateNotAfter(credential->context.crt_pem);
    if (not_after.ok()) on_certificate(profile.name, *not_after);
  }
  absl::StatusOr<std::unique_ptr<talos::TalosClient>> client =
      talos::NewGrpcTalosClient(credential->context, env, options);
  if (!client.ok()) return absl::FailedPreconditionError(std::string(client.status().message()));
  return client;
}

// The admin kubeconfig from the first control plane that hands out a usable one.
std::shared_ptr<kube::KubeClient> FetchKube(const core::ClusterProfile& profile,
                                            talos::TalosClient& talos, std::stop_token shutdown,
                                            Env& env) {
  kube::HttpKubeClientOptions kube_options;
  kube_options.shutdown = std::move(shutdown);
  for (const core::NodeSpec& node : profile.nodes) {
    if (node.role != core::NodeRole::kControlPlane) continue;
    absl::StatusOr<std::string> tarball = talos.Kubeconfig(node.address);
    if (!tarball.ok()) continue;
    absl::StatusOr<std::string> yaml = talos::ExtractFileFromTarGz(*tarball, "kubeconfig");
    if (!yaml.ok()) continue;
    absl::StatusOr<kube::KubeCredentials> credentials = kube::ParseKubeconfig(*yaml);
    if (!credentials.ok()) continue;
    absl::StatusOr<std::unique_ptr<kube::KubeClient>> client =
        kube::NewHttpKubeClient(*credentials, env, kube_options);
    if (client.ok()) return std::move(*client);
  }
  return nullptr;
}

}  // namespace

TalosconfigClientFactory::~TalosconfigClientFactory() {
  std::vector<Fetch> fetches;
  {
    MutexLock lock(mu_);
    fetches.swap(fetches_);
  }
  // Joined here, outside the lock.
}

absl::StatusOr<std::shared_ptr<TalosconfigClientFactory::Entry>> TalosconfigClientFactory::EntryFor(
    const core::ClusterProfile& profile) {
  {
    MutexLock lock(mu_);
    auto found = by_cluster_.find(profile.name);
    if (found != by_cluster_.end() && found->second->MadeFor(profile)) return found->second;
  }
  // Reads the talosconfig; no lock held.
  absl::StatusOr<std::unique_ptr<talos::TalosClient>> talos =
      MakeTalosClient(credentials_, profile, options_, env_, on_certificate_);
  if (!talos.ok()) return talos.status();
  auto fresh =
      std::make_shared<Entry>(profile, std::shared_ptr<talos::TalosClient>(std::move(*talos)));
  std::shared_ptr<Entry> replaced;  // released after the lock
  MutexLock lock(mu_);
  std::shared_ptr<Entry>& slot = by_cluster_[profile.name];
  if (slot && slot->MadeFor(profile)) return slot;  // another caller made it meanwhile
  replaced = std::exchange(slot, fresh);
  return fresh;
}

void TalosconfigClientFactory::StartKubeFetch(const core::ClusterProfile& profile,
                                              std::shared_ptr<Entry> entry) {
  MutexLock lock(mu_);
  std::erase_if(fetches_, [](const Fetch& f) { return f.done->load(); });  // joins at once
  auto done = std::make_shared<std::atomic<bool>>(false);
  fetches_.push_back({done, std::jthread([profile, entry = std::move(entry), done,
                                          shutdown = options_.shutdown, &env = env_] {
                        NameThisThread("kube-fetch");
                        std::shared_ptr<kube::KubeClient> kube =
                            FetchKube(profile, *entry->talos, shutdown, env);
                        {
                          MutexLock entry_lock(entry->mu);
                          entry->kube = std::move(kube);
                          entry->fetching = false;
                          entry->fetched.notify_all();
                        }
                        done->store(true);
                      })});
}

absl::Status TalosconfigClientFactory::DiagnoseUnreachable(const core::ClusterProfile& profile) {
  absl::StatusOr<Credential> credential = LoadCredential(credentials_, profile);
  if (!credential.ok()) return credential.status();
  for (const talos::Endpoint& endpoint : credential->context.endpoints) {
    absl::Status handshake = talos::DiagnoseHandshake(credential->context, endpoint,
                                                      options_.timeouts.connect, options_.shutdown);
    if (absl::IsCancelled(handshake)) return handshake;
    if (!handshake.ok()) return CredentialError(profile, *credential, handshake);
  }
  return absl::OkStatus();
}

absl::StatusOr<ClusterClients> TalosconfigClientFactory::ForProfile(
    const core::ClusterProfile& profile) {
  absl::StatusOr<std::shared_ptr<Entry>> entry = EntryFor(profile);
  if (!entry.ok()) return entry.status();
  Entry& e = **entry;
  MutexLock lock(e.mu);
  if (!e.kube && !e.fetching) {
    e.fetching = true;
    StartKubeFetch(profile, *entry);
  }
  env_.WaitFor(e.fetched, lock, {}, kube_wait_,
               [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(e.mu) { return !e.fetching; });
  return ClusterClients{e.talos, e.kube};
}

}  // namespace tr::reconciler
