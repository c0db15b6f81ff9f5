#include "core/profile_decode.h"

#include <map>
#include <optional>
#include <string>

#include "core/names.h"
#include "core/policy_decode.h"
#include "core/promotion_decode.h"
#include "core/update_policy_decode.h"
#include "core/schematic_decode.h"
#include "core/strict_yaml.h"
#include "core/yaml_decode.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

// A node as decoded, with the fields it was read from for later cross-checks.
struct DecodedNodes {
  std::vector<NodeSpec> nodes;
  std::vector<Field> fields;  // one per entry of `nodes`
  bool complete = false;      // every node decoded: cross-checks are meaningful
};

Field Sub(const Field& parent, std::string_view key) {
  return Field{.ctx = parent.ctx,
               .node = parent.node != nullptr ? parent.node->Find(key) : nullptr,
               .path = JoinPath(parent.path, key),
               .mark = parent.node != nullptr ? parent.node->mark : parent.mark};
}

// How spec.nodes[].schematic is read: allowed only beside spec.talos.schematic.
struct NodeSchematics {
  SchematicLookup& lookup;
  bool allowed = false;
};

std::optional<NodeSpec> DecodeNode(const Field& field, NodeSchematics& schematics) {
  MappingReader m(field, {"name", "address", "role", "schematic"});
  if (!m.ok()) return std::nullopt;
  const Field schematic_field = m.Optional("schematic");
  std::optional<Schematic> schematic;
  if (schematic_field.present() && !schematics.allowed) {
    schematic_field.Error("is set only when spec.talos uses schematic, not image");
  } else if (schematic_field.present()) {
    schematic = DecodeSchematicField(schematic_field, schematics.lookup);
    if (!schematic) return std::nullopt;
  }
  std::optional<std::string> name = ReadChecked(m.Required("name"), CheckDns1123Subdomain);
  std::optional<std::string> address = ReadChecked(m.Required("address"), CheckNodeAddress);
  std::optional<NodeRole> role = ReadEnum<NodeRole>(
      m.Required("role"),
      {{"controlplane", NodeRole::kControlPlane}, {"worker", NodeRole::kWorker}});
  if (!name || !address || !role) return std::nullopt;
  return NodeSpec{.name = *name, .address = *address, .role = *role, .schematic = schematic};
}

// Reports the second use of a node's `key` value; returns false if any was found.
bool CheckUnique(const DecodedNodes& decoded, std::string_view key,
                 std::string (*value)(const NodeSpec&)) {
  std::map<std::string, size_t> seen;
  bool ok = true;
  for (size_t i = 0; i < decoded.nodes.size(); ++i) {
    auto [it, inserted] = seen.emplace(value(decoded.nodes[i]), i);
    if (inserted) continue;
    Sub(decoded.fields[i], key)
        .Error(fmt::format("\"{}\" is already used by {}", it->first,
                           decoded.fields[it->second].path));
    ok = false;
  }
  return ok;
}

DecodedNodes DecodeNodes(const Field& field, NodeSchematics& schematics) {
  DecodedNodes decoded;
  std::vector<Field> items = ReadList(field);
  if (!field.present() || !field.node->IsSequence()) return decoded;
  if (items.empty()) {
    field.Error("must list at least one node");
    return decoded;
  }
  decoded.complete = true;
  for (const Field& item : items) {
    if (std::optional<NodeSpec> node = DecodeNode(item, schematics)) {
      decoded.nodes.push_back(*std::move(node));
      decoded.fields.push_back(item);
    } else {
      decoded.complete = false;
    }
  }
  const bool names = CheckUnique(decoded, "name", [](const NodeSpec& n) { return n.name; });
  const bool addresses =
      CheckUnique(decoded, "address", [](const NodeSpec& n) { return n.address; });
  decoded.complete = decoded.complete && names && addresses;
  if (decoded.complete &&
      std::none_of(decoded.nodes.begin(), decoded.nodes.end(),
                   [](const NodeSpec& n) { return n.role == NodeRole::kControlPlane; })) {
    field.Error("must include at least one controlplane node");
    decoded.complete = false;
  }
  return decoded;
}

// An endpoint must be the address of a control-plane node listed in spec.nodes.
void CheckEndpointHost(const Field& field, const Endpoint& endpoint, const DecodedNodes& nodes) {
  for (const NodeSpec& node : nodes.nodes) {
    if (node.address != endpoint.host) continue;
    if (node.role == NodeRole::kControlPlane) return;
    field.Error(
        fmt::format("{} is the address of worker \"{}\"; endpoints must be controlplane "
                    "nodes",
                    endpoint.host, node.name));
    return;
  }
  field.Error(
      fmt::format("{} is not the address of a controlplane node in spec.nodes", endpoint.host));
}

std::optional<std::vector<std::string>> DecodeEndpoints(const Field& field,
                                                        const DecodedNodes& nodes) {
  std::vector<Field> items = ReadList(field);
  if (!field.present() || !field.node->IsSequence()) return std::nullopt;
  if (items.empty()) {
    field.Error("must list at least one control-plane endpoint");
    return std::nullopt;
  }
  std::vector<std::string> endpoints;
  std::map<std::string, size_t> seen;
  bool ok = true;
  for (size_t i = 0; i < items.size(); ++i) {
    std::optional<std::string> text = ReadString(items[i]);
    absl::StatusOr<Endpoint> endpoint =
        text ? ParseEndpoint(*text) : absl::InvalidArgumentError("");
    if (text && !endpoint.ok()) items[i].Error(std::string(endpoint.status().message()));
    if (!endpoint.ok()) {
      ok = false;
      continue;
    }
    if (auto [it, inserted] = seen.emplace(*text, i); !inserted) {
      items[i].Error(
          fmt::format("\"{}\" is already listed at {}", *text, JoinPath(field.path, it->second)));
      ok = false;
      continue;
    }
    if (nodes.complete) CheckEndpointHost(items[i], *endpoint, nodes);
    endpoints.push_back(*text);
  }
  if (!ok) return std::nullopt;
  return endpoints;
}

// metadata.annotations: free for people and other tools, except in this project's own prefix,
// where a misspelt key would silently do nothing, so only the keys it reads are accepted.
std::string ReadRetryToken(const Field& field) {
  std::string token;
  for (const FieldEntry& entry : ReadMapEntries(field)) {
    if (absl::Status s = CheckLabelKey(entry.key); !s.ok()) {
      entry.KeyError("annotation key " + std::string(s.message()));
    }
    std::optional<std::string> value = ReadString(entry.value);
    if (!value) continue;
    if (entry.key == kRetryAnnotation) {
      if (value->size() > 256) entry.value.Error("is longer than 256 characters");
      token = *std::move(value);
    } else if (entry.key.starts_with(kAnnotationPrefix)) {
      entry.KeyError(fmt::format("is not an annotation the reconciler reads (it reads {})",
                                 kRetryAnnotation));
    }
  }
  return token;
}

void DecodeMetadata(const Field& field, std::string_view path, ClusterProfile& profile) {
  MappingReader m(field, {"name", "labels", "annotations"});
  profile.labels = ReadLabels(m.Optional("labels"));
  profile.retry_token = ReadRetryToken(m.Optional("annotations"));
  const Field name_field = m.Required("name");
  std::optional<std::string> name = ReadChecked(name_field, CheckDns1123Label);
  if (!name) return;
  const std::string expected = ClusterNameFromPath(path);
  if (*name != expected) {
    name_field.Error(fmt::format("must match the file name: \"{}\" ({})", expected, path));
    return;
  }
  profile.name = *name;
}

void DecodeSpec(const Field& field, const ValidationOptions& options, SchematicLookup& lookup,
                ClusterProfile& profile) {
  MappingReader spec(field, {"endpoints", "credentials", "talos", "kubernetes", "nodes", "policy",
                             "promotion", "shard", "updates"});
  if (!spec.ok()) return;
  const Field talos_field = spec.Required("talos");
  MappingReader talos(talos_field, {"version", "image", "schematic", "factory", "platform",
                                    "secureboot", "installerStore"});
  if (auto v = ReadTalosVersion(talos.Required("version"))) profile.talos_version = *v;
  if (const Field store = talos.Optional("installerStore"); store.present()) {
    profile.talos_installer_store =
        ReadEnum<InstallerStore>(
            store, {{"system", InstallerStore::kSystem}, {"inmem", InstallerStore::kInMemory}})
            .value_or(InstallerStore::kSystem);
  }
  DecodeTalosInstaller(talos_field, talos, lookup, profile);
  NodeSchematics node_schematics{.lookup = lookup,
                                 .allowed = talos.Optional("schematic").present()};
  DecodedNodes nodes = DecodeNodes(spec.Required("nodes"), node_schematics);
  profile.nodes = nodes.nodes;
  profile.endpoints =
      DecodeEndpoints(spec.Required("endpoints"), nodes).value_or(std::vector<std::string>{});
  profile.credentials =
      ReadChecked(spec.Required("credentials"), CheckCredentialsName).value_or("");
  MappingReader kubernetes(spec.Required("kubernetes"), {"version"});
  if (auto v = ReadKubernetesVersion(kubernetes.Required("version"))) {
    profile.kubernetes_version = *v;
  }
  profile.policy_overrides = DecodePolicy(spec.Optional("policy"), options);
  if (const Field promotion = spec.Optional("promotion"); promotion.present()) {
    profile.promotion = DecodePromotion(promotion);
  }
  profile.updates_overrides = DecodeUpdatePolicy(spec.Optional("updates"), options);
  profile.updates = MergeUpdatePolicy(UpdatePolicy{}, profile.updates_overrides);
  const Field shard = spec.Optional("shard");
  if (std::optional<int64_t> n = ReadInteger(shard, 0, 1023)) {
    if (options.shards > 0 && *n >= options.shards) {
      shard.Error(fmt::format("must be below the number of shards, {} (--shards)", options.shards));
    } else {
      profile.shard = static_cast<int>(*n);
    }
  }
}

}  // namespace

std::string ClusterNameFromPath(std::string_view path) {
  const size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (base.ends_with(".yaml")) {
    base.remove_suffix(5);
  } else if (base.ends_with(".yml")) {
    base.remove_suffix(4);
  }
  return std::string(base);
}

Decoded<ClusterProfile> DecodeClusterProfile(std::string_view path, std::string_view content,
                                             const PolicyOverrides& defaults,
                                             const ValidationOptions& options,
                                             const SchematicFiles& schematic_files) {
  SchematicLookup lookup{.files = &schematic_files, .file_diagnostics = {}, .reported = {}};
  Decoded<ClusterProfile> decoded =
      DecodeYamlDocument<ClusterProfile>(path, content, [&](const Field& root) {
    MappingReader top(root, {"apiVersion", "kind", "metadata", "spec"});
    ClusterProfile profile;
    profile.file = std::string(path);
    if (top.ok()) {
      CheckHeader(top, kApiVersion, "ClusterProfile");
      DecodeMetadata(top.Required("metadata"), path, profile);
      DecodeSpec(top.Required("spec"), options, lookup, profile);
    }
    profile.policy = MergePolicy(MergePolicy(Policy{}, defaults), profile.policy_overrides);
    return profile;
  });
  // The referenced schematic files' own errors, after the profile's error that names each.
  decoded.diagnostics.insert(decoded.diagnostics.end(), lookup.file_diagnostics.begin(),
                             lookup.file_diagnostics.end());
  return decoded;
}

}  // namespace tr::core
