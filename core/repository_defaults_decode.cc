#include "core/repository_defaults_decode.h"

#include <map>

#include "core/names.h"
#include "core/policy_decode.h"
#include "core/profile_decode.h"
#include "core/strict_yaml.h"
#include "core/update_policy_decode.h"
#include "core/yaml_decode.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

std::optional<SupportMatrixEntry> DecodeMatrixRow(const Field& field) {
  MappingReader m(field, {"talos", "kubernetes", "minimumUpgradeFrom"});
  if (!m.ok()) return std::nullopt;
  std::optional<MinorVersion> talos = ReadMinorVersion(m.Required("talos"));
  const Field kubernetes = m.Required("kubernetes");
  MappingReader range(kubernetes, {"min", "max"});
  std::optional<MinorVersion> min = ReadMinorVersion(range.Required("min"));
  std::optional<MinorVersion> max = ReadMinorVersion(range.Required("max"));
  const Field from_field = m.Required("minimumUpgradeFrom");
  std::optional<Version> from = ReadTalosVersion(from_field);
  bool ok = talos && min && max && from;
  if (min && max && *max < *min) {
    range.Optional("max").Error(fmt::format("must not be older than min ({})", min->ToString()));
    ok = false;
  }
  if (talos && from && !(from->Minor() < *talos)) {
    from_field.Error(fmt::format("must be older than Talos {}", talos->ToString()));
    ok = false;
  }
  if (!ok) return std::nullopt;
  return SupportMatrixEntry{.talos = *talos,
                            .kubernetes_min = *min,
                            .kubernetes_max = *max,
                            .minimum_upgrade_from = *from};
}

std::vector<SupportMatrixEntry> DecodeSupportMatrix(const Field& field) {
  std::vector<SupportMatrixEntry> rows;
  std::map<MinorVersion, std::string> seen;
  for (const Field& item : ReadList(field)) {
    std::optional<SupportMatrixEntry> row = DecodeMatrixRow(item);
    if (!row) continue;
    if (auto [it, inserted] = seen.emplace(row->talos, item.path); !inserted) {
      item.Error(
          fmt::format("Talos {} already has a row at {}", row->talos.ToString(), it->second));
      continue;
    }
    rows.push_back(*row);
  }
  return rows;
}

// Release versions only: the planner takes intermediate hops from these.
std::vector<Version> DecodeReleases(const Field& field,
                                    std::optional<Version> (*read)(const Field&)) {
  std::vector<Version> versions;
  for (const Field& item : ReadList(field)) {
    std::optional<Version> v = read(item);
    if (!v) continue;
    if (!v->IsRelease()) {
      item.Error("must be a release version (no prerelease or build suffix)");
      continue;
    }
    versions.push_back(*v);
  }
  return versions;
}

}  // namespace

Decoded<RepositoryDefaults> DecodeRepositoryDefaults(std::string_view path,
                                                     std::string_view content,
                                                     const ValidationOptions& options) {
  return DecodeYamlDocument<RepositoryDefaults>(path, content, [&](const Field& root) {
    MappingReader top(root, {"apiVersion", "kind", "policy", "supportMatrix", "releases",
                              "imageFactory", "updates"});
    RepositoryDefaults defaults;
    if (top.ok()) {
      CheckHeader(top, kApiVersion, "RepositoryDefaults");
      defaults.policy = DecodePolicy(top.Optional("policy"), options);
      defaults.support_matrix = DecodeSupportMatrix(top.Optional("supportMatrix"));
      MappingReader releases(top.Optional("releases"), {"talos", "kubernetes"});
      defaults.talos_releases = DecodeReleases(releases.Optional("talos"), ReadTalosVersion);
      defaults.kubernetes_releases =
          DecodeReleases(releases.Optional("kubernetes"), ReadKubernetesVersion);
      defaults.image_factory =
          ReadChecked(top.Optional("imageFactory"), CheckImageFactoryUrl).value_or("");
      defaults.updates = DecodeUpdatePolicy(top.Optional("updates"), options);
    }
    return defaults;
  });
}

}  // namespace tr::core
