#include "reconciler/app/adopt_command.h"

#include "core/adopted_profile.h"
#include "core/names.h"
#include "fmt/format.h"
#include "reconciler/clients/cluster_clients.h"
#include "reconciler/clients/talos/talosconfig.h"
#include "reconciler/operations/adoption.h"
#include "reconciler/runtime/cli_error.h"

namespace tr::reconciler {
namespace {

// As a profile writes an endpoint: the host alone on apid's port, else host:port.
std::string EndpointText(const talos::Endpoint& endpoint) {
  return endpoint.port == talos::kApidPort ? endpoint.host : endpoint.Target();
}

// The nodes to ask for etcd's members: the context's default nodes, then its endpoints' hosts.
std::vector<std::string> AskFirst(const talos::TalosContext& context) {
  std::vector<std::string> ask = context.nodes;
  for (const talos::Endpoint& endpoint : context.endpoints) {
    if (std::find(ask.begin(), ask.end(), endpoint.host) == ask.end()) {
      ask.push_back(endpoint.host);
    }
  }
  return ask;
}

absl::StatusOr<std::string> Adopt(const AdoptOptions& options) {
  std::filesystem::path file = options.talosconfig;
  if (file.empty()) file = talos::DefaultTalosconfigPath();
  if (file.empty()) {
    return absl::InvalidArgumentError(
        "no talosconfig: give --talosconfig, set $TALOSCONFIG or write ~/.talos/config");
  }
  absl::StatusOr<talos::TalosConfig> config = talos::LoadTalosConfig(file);
  if (!config.ok()) return config.status();
  absl::StatusOr<talos::TalosContext> context = config->Context(options.context);
  if (!context.ok()) return context.status();
  if (absl::Status s = core::CheckCredentialsName(context->name); !s.ok()) {
    return absl::InvalidArgumentError(fmt::format(
        "the context name {} cannot be spec.credentials ({}); rename the context",
        context->name, std::string(s.message())));
  }
  core::ClusterProfile seed;
  seed.name = options.cluster.empty() ? context->name : options.cluster;
  if (absl::Status s = core::CheckDns1123Label(seed.name); !s.ok()) {
    return absl::InvalidArgumentError(fmt::format(
        "the cluster name {} cannot be metadata.name ({}); give another as the argument",
        seed.name, std::string(s.message())));
  }
  seed.credentials = context->name;
  for (const talos::Endpoint& endpoint : context->endpoints) {
    seed.endpoints.push_back(EndpointText(endpoint));
  }
  TalosconfigClientFactory clients(TalosCredentials{{}, file}, talos::GrpcTalosClientOptions{},
                                   Env::Default());
  absl::StatusOr<std::vector<core::AdoptedNode>> nodes =
      ObserveForAdoption(clients, seed, AskFirst(*context));
  if (!nodes.ok()) return nodes.status();
  core::AdoptInput input{seed.name, seed.credentials, seed.endpoints, *std::move(nodes),
                         options.image};
  if (input.image.empty()) input.schematic = ProvenSchematic(input.nodes);
  return core::AdoptedProfileYaml(input);
}

}  // namespace

int RunAdopt(const AdoptOptions& options, std::ostream& out, std::ostream& err) {
  absl::StatusOr<std::string> profile = Adopt(options);
  if (!profile.ok()) {
    err << ErrorLine(std::string(profile.status().message()));
    return 1;
  }
  out << *profile;
  return 0;
}

}  // namespace tr::reconciler
