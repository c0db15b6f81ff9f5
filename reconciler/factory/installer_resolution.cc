#include "reconciler/factory/installer_resolution.h"

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
  if (check_extensions) {
    if (absl::Status s = CheckExtensions(origin, profile); !s.ok()) return s;
  }
  absl::StatusOr<std::string> id = ids_.Resolve(origin, core::SchematicYaml(installer.schematic));
  if (!id.ok()) {
    return absl::Status(id.status().code(),
                        fmt::format("the Image Factory {} gave no ID for the schematic: {}", origin,
                                    std::string(id.status().message())));
  }
  core::ClusterProfile resolved = profile;
  resolved.talos_schematic_id = *id;
  resolved.talos_image =
      core::FactoryInstallerRepository(origin, installer.platform, installer.secureboot, *id);
  return resolved;
}

absl::Status InstallerResolver::CheckExtensions(std::string_view origin,
                                                const core::ClusterProfile& profile) {
  const std::vector<std::string>& wanted = profile.talos_factory->schematic.official_extensions;
  if (wanted.empty()) return absl::OkStatus();
  const auto key = std::make_pair(std::string(origin), profile.talos_version.Tag());
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
  absl::StatusOr<std::vector<std::string>> listed = extensions_(origin, profile.talos_version);
  if (!listed.ok()) {
    return absl::Status(
        listed.status().code(),
        fmt::format("the Image Factory {} did not list the extensions of Talos {}: {}", origin,
                    profile.talos_version.ToString(), std::string(listed.status().message())));
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
        origin, missing, profile.talos_version.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace tr::reconciler::factory
