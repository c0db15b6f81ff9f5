#include "reconciler/clients/factory/installer_resolution.h"

#include <utility>

#include "core/schematic.h"
#include "fmt/format.h"

namespace tr::reconciler::factory {

InstallerResolver::InstallerResolver(std::string default_factory, SchematicIds& ids,
                                     ExtensionLister extensions, std::string default_named_by)
    : default_factory_(std::move(default_factory)),
      default_named_by_(std::move(default_named_by)),
      ids_(ids),
      extensions_(std::move(extensions)) {}

absl::StatusOr<core::ClusterProfile> InstallerResolver::Resolve(const core::ClusterProfile& profile,
                                                                bool check_extensions) {
  if (!profile.talos_factory) return profile;
  const core::FactoryInstaller& installer = *profile.talos_factory;
  const std::string origin = installer.factory.empty() ? default_factory_ : installer.factory;
  if (origin.empty()) {
    return absl::FailedPreconditionError(
        fmt::format("spec.talos.schematic needs an Image Factory: name it in spec.talos.factory, "
                    "in reconciler.yaml's imageFactory, or {}",
                    default_named_by_));
  }
  absl::StatusOr<std::string> id =
      SchematicId(origin, profile.talos_version, installer.schematic, check_extensions);
  if (!id.ok()) return id.status();
  core::ClusterProfile resolved = profile;
  resolved.talos_schematic_id = *id;
  resolved.talos_image =
      core::FactoryInstallerRepository(origin, installer.platform, installer.secureboot, *id);
  for (core::NodeSpec& node : resolved.nodes) {
    if (!node.schematic) continue;
    absl::StatusOr<std::string> own =
        SchematicId(origin, profile.talos_version, *node.schematic, check_extensions);
    if (!own.ok()) {
      return absl::Status(own.status().code(),
                          fmt::format("node {}'s schematic (spec.nodes[].schematic): {}", node.name,
                                      std::string(own.status().message())));
    }
    node.talos_schematic_id = *own;
    node.talos_image =
        core::FactoryInstallerRepository(origin, installer.platform, installer.secureboot, *own);
  }
  return resolved;
}

absl::StatusOr<std::string> InstallerResolver::SchematicId(std::string_view origin,
                                                           const core::Version& version,
                                                           const core::Schematic& schematic,
                                                           bool check_extensions) {
  if (check_extensions) {
    absl::Status s = CheckExtensions(origin, version, schematic.official_extensions);
    if (!s.ok()) return s;
  }
  absl::StatusOr<std::string> id = ids_.Resolve(origin, core::SchematicYaml(schematic));
  if (!id.ok()) {
    return absl::Status(id.status().code(),
                        fmt::format("the Image Factory {} gave no ID for the schematic: {}", origin,
                                    std::string(id.status().message())));
  }
  return id;
}

absl::Status InstallerResolver::CheckExtensions(std::string_view origin,
                                                const core::Version& version,
                                                const std::vector<std::string>& wanted) {
  if (wanted.empty()) return absl::OkStatus();
  const auto key = std::make_pair(std::string(origin), version.Tag());
  const auto missing_from = [&](const std::set<std::string>& known) {
    for (const std::string& name : wanted) {
      if (!known.contains(name)) return name;
    }
    return std::string();
  };
  {
    MutexLock lock(mu_);
    if (auto it = known_extensions_.find(key); it != known_extensions_.end()) {
      if (missing_from(it->second).empty()) return absl::OkStatus();
    }
  }
  absl::StatusOr<std::vector<std::string>> listed = extensions_(origin, version);
  if (!listed.ok()) {
    return absl::Status(
        listed.status().code(),
        fmt::format("the Image Factory {} did not list the extensions of Talos {}: {}", origin,
                    version.ToString(), std::string(listed.status().message())));
  }
  const std::set<std::string> known(listed->begin(), listed->end());
  {
    MutexLock lock(mu_);
    known_extensions_[key] = known;
  }
  if (std::string missing = missing_from(known); !missing.empty()) {
    return absl::FailedPreconditionError(fmt::format(
        "the Image Factory {} has no extension {} for Talos {}: no node is upgraded until the "
        "schematic names only extensions that exist for it",
        origin, missing, version.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace tr::reconciler::factory
