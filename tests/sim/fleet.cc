#include "tests/sim/fleet.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <set>
#include <string_view>
#include <unordered_map>

#include "core/support_matrix.h"
#include "fmt/format.h"
#include "tests/sim/api/kube_api.h"
#include "tests/sim/api/node_listeners.h"
#include "tests/sim/common/client_config.h"
#include "tests/sim/control_server.h"

namespace tr::sim {
namespace {

constexpr int kAutoPrefixAttempts = 24;

struct Role {
  const char* role;
  const char* file;
};
constexpr Role kRoles[] = {{"os:admin", "talosconfig"},
                           {"os:operator", "talosconfig-operator"},
                           {"os:reader", "talosconfig-reader"},
                           {"os:etcd:backup", "talosconfig-etcd-backup"}};

// Candidate "127.a.b" prefixes: derived from the pid so parallel test processes differ, never
// 127.0.x (the usual home of real local services).
std::string AutoPrefix(int attempt) {
  const unsigned pid = static_cast<unsigned>(getpid());
  const unsigned a = 1 + (pid / 250 + static_cast<unsigned>(attempt) * 37) % 254;
  const unsigned b = 1 + (pid + static_cast<unsigned>(attempt) * 101) % 250;
  return fmt::format("127.{}.{}", a, b);
}

absl::Status WriteFile(const std::filesystem::path& path, const std::string& content) {
  const auto tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << content;
    if (!out) return absl::InternalError(fmt::format("cannot write {}", path.string()));
  }
  std::filesystem::permissions(
      tmp, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::rename(tmp, path);
  return absl::OkStatus();
}

}  // namespace

class Fleet::Impl {
 public:
  struct ClusterRuntime {
    std::unique_ptr<SimCluster> sim;
    std::optional<CertificateAuthority> os_ca, kube_ca;
    std::string token;
    ClusterAccess access;
    std::unique_ptr<KubeApiServer> kube;
  };

  FleetSpec spec;
  std::filesystem::path state_dir;
  double scale = 1;
  std::shared_ptr<Scheduler> scheduler;
  std::unique_ptr<Journal> journal;
  std::vector<ClusterRuntime> clusters;
  std::unique_ptr<NodeListeners> listeners;
  bool refuse_while_down = false;
  std::unique_ptr<ControlServer> control;
  std::shared_ptr<ImageFactory> factory;
  std::unique_ptr<ImageFactoryServer> factory_server;
  std::mutex stop_mu;
  bool stopped = false;

  // Every call a listener takes looks its node up here: by the index once the fleet is bound
  // (a scan of 5,000 nodes was a fifth of the simulator's CPU at 1,000 clusters), by a scan
  // while it is being bound. Names and addresses do not change once bound, so no lock is
  // needed (callers may hold their own cluster's lock).
  std::pair<SimCluster*, SimNode*> Find(std::string_view target) {
    if (indexed.load(std::memory_order_acquire)) {
      auto it = index.find(target);
      return it == index.end() ? std::pair<SimCluster*, SimNode*>{} : it->second;
    }
    for (auto& c : clusters) {
      for (auto& n : c.sim->nodes()) {
        if (n->address == target || n->spec.name == target) return {c.sim.get(), n.get()};
      }
    }
    return {nullptr, nullptr};
  }
  // The scan's answers, as a map: the first node in its order wins a name that repeats.
  void Index() {
    index.clear();
    for (auto& c : clusters) {
      for (auto& n : c.sim->nodes()) {
        index.try_emplace(n->address, c.sim.get(), n.get());
        index.try_emplace(n->spec.name, c.sim.get(), n.get());
      }
    }
    indexed.store(true, std::memory_order_release);
  }
  std::unordered_map<std::string_view, std::pair<SimCluster*, SimNode*>> index;  // into nodes
  std::atomic<bool> indexed{false};

  absl::Status CreateAuthorities();
  absl::Status StartFactory();
  absl::Status Bind(const std::string& prefix);
  void Unbind();
  absl::Status WriteFiles();
  void Stop();
};

absl::Status Fleet::Impl::CreateAuthorities() {
  for (const auto& cluster_spec : spec.clusters) {
    ClusterRuntime rt;
    auto os_ca = CertificateAuthority::Create("talos", KeyType::kEd25519);
    if (!os_ca.ok()) return os_ca.status();
    auto kube_ca = CertificateAuthority::Create("kubernetes", KeyType::kEcdsaP256);
    if (!kube_ca.ok()) return kube_ca.status();
    rt.os_ca = std::move(*os_ca);
    rt.kube_ca = std::move(*kube_ca);
    rt.token = fmt::format("{}.{}", RandomHex(3), RandomHex(8));
    rt.access.name = cluster_spec.name;
    clusters.push_back(std::move(rt));
  }
  return absl::OkStatus();
}

// The factory knows the fleet's schematics and builds the built-in release catalog's releases
// and every version a node runs, unless the fleet file lists its versions.
absl::Status Fleet::Impl::StartFactory() {
  std::set<std::string> schematics(spec.registry.schematics.begin(),
                                   spec.registry.schematics.end());
  std::vector<std::string> versions;
  const auto releases = core::ReleaseCatalog::BuiltIn();
  for (const auto& minor : core::SupportMatrix::BuiltIn().TalosMinors()) {
    if (auto latest = releases.LatestTalos(minor)) versions.push_back(latest->Tag());
  }
  for (const auto& cs : spec.clusters) {
    for (const auto& node : cs.nodes) {
      if (!node.schematic.empty()) schematics.insert(node.schematic);
      versions.push_back(node.talos_version);
    }
  }
  factory = std::make_shared<ImageFactory>(spec.factory, versions, schematics);
  auto server = ImageFactoryServer::Start(factory, scheduler, scale);
  if (!server.ok()) return server.status();
  factory_server = std::move(*server);
  return absl::OkStatus();
}

// Creates the clusters' machines on `prefix` and binds every listener. Unavailable (or
// AlreadyExists for an explicit address) when an address is taken.
absl::Status Fleet::Impl::Bind(const std::string& prefix) {
  int next_host = 1;
  // One registry for the whole fleet: every node's schematic exists, plus the fleet file's.
  std::set<std::string> schematics = {std::string(kVanillaSchematic)};
  schematics.insert(spec.registry.schematics.begin(), spec.registry.schematics.end());
  for (const auto& cs : spec.clusters) {
    for (const auto& node : cs.nodes) {
      if (!node.schematic.empty()) schematics.insert(node.schematic);
    }
  }
  auto registry =
      std::make_shared<RegistryCatalog>(spec.registry.images, std::move(schematics), factory);
  listeners = std::make_unique<NodeListeners>(
      [this](std::string_view target) { return Find(target); }, refuse_while_down);
  for (size_t i = 0; i < spec.clusters.size(); ++i) {
    const ClusterSpec& cs = spec.clusters[i];
    ClusterRuntime& rt = clusters[i];
    rt.sim = std::make_unique<SimCluster>(cs, spec.timings, scale, scheduler, journal.get());
    rt.sim->set_registry(registry);
    std::vector<std::string> addresses;
    for (const auto& node : cs.nodes) {
      addresses.push_back(node.address.empty() ? fmt::format("{}.{}", prefix, next_host++)
                                               : node.address);
    }
    for (size_t n = 0; n < cs.nodes.size(); ++n) rt.sim->nodes()[n]->address = addresses[n];
    rt.access.control_plane_addresses.clear();
    rt.access.worker_addresses.clear();
    for (size_t n = 0; n < cs.nodes.size(); ++n) {
      SimNode* node = rt.sim->nodes()[n].get();
      (node->is_control_plane() ? rt.access.control_plane_addresses : rt.access.worker_addresses)
          .push_back(addresses[n]);
      auto cert = rt.os_ca->Issue({.common_name = node->spec.name,
                                   .organizations = {"talos"},
                                   .ip_sans = {addresses[n]},
                                   .dns_sans = {node->spec.name},
                                   .server = true,
                                   .key_type = KeyType::kEd25519});
      if (!cert.ok()) return cert.status();
      auto added = listeners->Add(rt.sim.get(), node, *cert, rt.os_ca->cert_pem());
      if (!added.ok()) {
        if (!node->spec.address.empty()) {
          return absl::AlreadyExistsError(std::string(added.message()));
        }
        return added;
      }
    }
    const std::string& api_address = rt.access.control_plane_addresses.front();
    auto kube_cert = rt.kube_ca->Issue({.common_name = "kube-apiserver",
                                        .organizations = {},
                                        .ip_sans = {api_address},
                                        .dns_sans = {"kubernetes"},
                                        .server = true,
                                        .key_type = KeyType::kEcdsaP256});
    if (!kube_cert.ok()) return kube_cert.status();
    auto kube =
        KubeApiServer::Start(rt.sim.get(), api_address, cs.kube_api_port, *kube_cert, rt.token);
    if (!kube.ok()) return kube.status();
    rt.kube = std::move(*kube);
  }
  return absl::OkStatus();
}

void Fleet::Impl::Unbind() {
  indexed.store(false, std::memory_order_release);
  for (auto& rt : clusters) {
    if (rt.sim) rt.sim->Stop();
  }
  if (listeners) listeners->Stop();
  for (auto& rt : clusters) {
    if (rt.kube) rt.kube->Stop();
    rt.kube.reset();
  }
}

absl::Status Fleet::Impl::WriteFiles() {
  nlohmann::json ready = {
      {"pid", getpid()}, {"time_scale", scale}, {"journal", journal->file().string()}};
  ready["clusters"] = nlohmann::json::array();
  for (auto& rt : clusters) {
    const auto dir = state_dir / rt.access.name;
    std::filesystem::create_directories(dir);
    for (const Role& role : kRoles) {
      auto client = rt.os_ca->Issue({.common_name = role.role,
                                     .organizations = {role.role},
                                     .ip_sans = {},
                                     .dns_sans = {},
                                     .server = false,
                                     .key_type = KeyType::kEd25519});
      if (!client.ok()) return client.status();
      const auto path = dir / role.file;
      if (auto st =
              WriteFile(path, RenderTalosconfig(rt.access.name, rt.access.control_plane_addresses,
                                                rt.os_ca->cert_pem(), *client));
          !st.ok()) {
        return st;
      }
      rt.access.talosconfig_by_role[role.role] = path;
    }
    rt.access.talosconfig = rt.access.talosconfig_by_role["os:admin"];
    rt.access.kube_api_url = rt.kube->url();
    rt.access.ca_pem = rt.os_ca->cert_pem();
    rt.access.kube_ca_pem = rt.kube_ca->cert_pem();
    const std::string kubeconfig =
        RenderKubeconfig(rt.access.name, rt.kube->url(), rt.kube_ca->cert_pem(), rt.token);
    rt.sim->set_kubeconfig(kubeconfig);
    rt.access.kubeconfig = dir / "kubeconfig";
    if (auto st = WriteFile(rt.access.kubeconfig, kubeconfig); !st.ok()) return st;
    nlohmann::json cluster = AccessToJson(rt.access);
    cluster["nodes"] = nlohmann::json::array();
    std::lock_guard lock(rt.sim->mu());
    for (const auto& node : rt.sim->nodes()) {
      cluster["nodes"].push_back({{"name", node->spec.name},
                                  {"address", node->address},
                                  {"endpoint", node->address + ":50000"},
                                  {"role", NodeRoleName(node->spec.role)}});
    }
    ready["clusters"].push_back(cluster);
  }
  ready["control_url"] = control ? control->url() : "";
  ready["factory_url"] = factory_server->url();
  return WriteFile(state_dir / "ready.json", ready.dump(2) + "\n");
}

void Fleet::Impl::Stop() {
  std::lock_guard lock(stop_mu);
  if (stopped) return;
  stopped = true;
  if (control) control->Stop();
  if (factory_server) factory_server->Stop();
  Unbind();
  scheduler->Stop();
}

Fleet::Fleet(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Fleet::~Fleet() { Stop(); }

void Fleet::Stop() { impl_->Stop(); }

absl::StatusOr<std::unique_ptr<Fleet>> Fleet::Start(FleetSpec spec, std::filesystem::path state_dir,
                                                    FleetOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->spec = std::move(spec);
  impl->state_dir = std::move(state_dir);
  impl->scale = options.time_scale.value_or(impl->spec.time_scale);
  impl->refuse_while_down =
      options.refuse_connections_while_down.value_or(impl->spec.refuse_connections_while_down);
  if (!(impl->scale > 0)) return absl::InvalidArgumentError("time scale must be positive");
  std::error_code ec;
  std::filesystem::create_directories(impl->state_dir, ec);
  if (ec) {
    return absl::InternalError(
        fmt::format("cannot create state dir {}: {}", impl->state_dir.string(), ec.message()));
  }
  impl->scheduler = options.scheduler ? options.scheduler : std::make_shared<RealScheduler>();
  impl->journal = std::make_unique<Journal>(impl->state_dir / "journal.jsonl");
  if (auto st = impl->CreateAuthorities(); !st.ok()) return st;
  if (auto st = impl->StartFactory(); !st.ok()) {
    impl->scheduler->Stop();
    return st;
  }
  std::string prefix =
      options.address_prefix.empty() ? impl->spec.address_prefix : options.address_prefix;
  if (prefix == "auto") prefix.clear();
  absl::Status bound = absl::UnavailableError("no address prefix tried");
  for (int attempt = 0; attempt < (prefix.empty() ? kAutoPrefixAttempts : 1); ++attempt) {
    bound = impl->Bind(prefix.empty() ? AutoPrefix(attempt) : prefix);
    if (bound.ok()) break;
    impl->Unbind();
    if (bound.code() != absl::StatusCode::kUnavailable) break;
  }
  if (!bound.ok()) {
    impl->scheduler->Stop();
    if (!prefix.empty() && bound.code() == absl::StatusCode::kUnavailable) {
      return absl::AlreadyExistsError(std::string(bound.message()));
    }
    return bound;
  }
  impl->Index();
  for (auto& rt : impl->clusters) {
    std::vector<std::string> addresses;
    for (const auto& node : rt.sim->nodes()) addresses.push_back(node->address);
    rt.sim->Boot(addresses);
  }
  impl->listeners->Supervise();
  std::unique_ptr<Fleet> fleet(new Fleet(std::move(impl)));
  if (options.control_endpoint) {
    auto control = ControlServer::Start(fleet.get());
    if (!control.ok()) return control.status();
    fleet->impl_->control = std::move(*control);
  }
  if (auto st = fleet->impl_->WriteFiles(); !st.ok()) return st;
  return fleet;
}

std::vector<std::string> Fleet::ClusterNames() const {
  std::vector<std::string> names;
  for (const auto& c : impl_->clusters) names.push_back(c.access.name);
  return names;
}

absl::StatusOr<ClusterAccess> Fleet::Cluster(std::string_view cluster) const {
  for (const auto& c : impl_->clusters) {
    if (c.access.name == cluster) return c.access;
  }
  return absl::NotFoundError(fmt::format("no cluster {}", cluster));
}

absl::StatusOr<std::string> Fleet::NodeAddress(std::string_view node) const {
  auto snapshot = Node(node);
  if (!snapshot.ok()) return snapshot.status();
  return snapshot->address;
}

absl::StatusOr<NodeSnapshot> Fleet::Node(std::string_view node) const {
  for (const auto& c : impl_->clusters) {
    std::lock_guard lock(c.sim->mu());
    for (const auto& n : c.sim->nodes()) {
      if (n->spec.name == node) return c.sim->SnapshotLocked(*n);
    }
  }
  return absl::NotFoundError(fmt::format("no node {}", node));
}

std::vector<NodeSnapshot> Fleet::Nodes() const {
  std::vector<NodeSnapshot> out;
  for (const auto& c : impl_->clusters) {
    std::lock_guard lock(c.sim->mu());
    for (const auto& n : c.sim->nodes()) out.push_back(c.sim->SnapshotLocked(*n));
  }
  return out;
}

absl::Status Fleet::InjectFault(std::string_view node, Fault fault) {
  for (auto& c : impl_->clusters) {
    for (auto& n : c.sim->nodes()) {
      if (n->spec.name == node) return c.sim->InjectFault(*n, std::move(fault));
    }
  }
  return absl::NotFoundError(fmt::format("no node {}", node));
}

absl::Status Fleet::ClearFaults(std::string_view node, std::optional<FaultKind> kind) {
  for (auto& c : impl_->clusters) {
    for (auto& n : c.sim->nodes()) {
      if (n->spec.name != node) continue;
      c.sim->ClearFaults(*n, kind);
      return absl::OkStatus();
    }
  }
  return absl::NotFoundError(fmt::format("no node {}", node));
}

absl::Status Fleet::WaitForNode(std::string_view node,
                                const std::function<bool(const NodeSnapshot&)>& predicate,
                                std::chrono::milliseconds timeout) const {
  for (const auto& c : impl_->clusters) {
    std::unique_lock lock(c.sim->mu());
    for (const auto& n : c.sim->nodes()) {
      if (n->spec.name != node) continue;
      const SimNode* target = n.get();
      if (c.sim->cv().wait_for(lock, timeout,
                               [&] { return predicate(c.sim->SnapshotLocked(*target)); })) {
        return absl::OkStatus();
      }
      return absl::DeadlineExceededError(fmt::format(
          "node {} did not reach the expected state within {} ms", node, timeout.count()));
    }
  }
  return absl::NotFoundError(fmt::format("no node {}", node));
}

const Journal& Fleet::journal() const { return *impl_->journal; }
const std::filesystem::path& Fleet::state_dir() const { return impl_->state_dir; }
std::string Fleet::control_url() const {
  return impl_->control ? impl_->control->url() : std::string();
}
double Fleet::time_scale() const { return impl_->scale; }
std::string Fleet::factory_url() const { return impl_->factory_server->url(); }
ImageFactory& Fleet::factory() const { return *impl_->factory; }
void Fleet::SetFactoryFaults(FactoryFaults faults) { impl_->factory_server->set_faults(faults); }
FactoryFaults Fleet::factory_faults() const { return impl_->factory_server->faults(); }

}  // namespace tr::sim
