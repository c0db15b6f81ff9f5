#include "core/profile_set.h"

#include <algorithm>

#include "core/profile_decode.h"
#include "core/promotion_decode.h"
#include "core/repository_defaults_decode.h"
#include "core/schematic_decode.h"
#include "core/strict_yaml.h"
#include "core/yaml_text.h"

namespace tr::core {
namespace {

constexpr std::string_view kDefaultsPath = "reconciler.yaml";
constexpr std::string_view kClustersDir = "clusters/";

enum class FileRole { kIgnored, kProfile, kWrongExtension };

FileRole RoleOf(std::string_view path) {
  if (!path.starts_with(kClustersDir)) return FileRole::kIgnored;
  const std::string_view base = path.substr(kClustersDir.size());
  if (base.find('/') != std::string_view::npos) return FileRole::kIgnored;
  if (base.ends_with(".yaml")) return FileRole::kProfile;
  if (base.ends_with(".yml")) return FileRole::kWrongExtension;
  return FileRole::kIgnored;
}

Diagnostic FileDiagnostic(std::string_view path, std::string message) {
  return {
      .file = MessageSafe(path), .line = 0, .column = 0, .path = "", .message = std::move(message)};
}

void DecodeDefaults(const SourceFile& file, const ValidationOptions& options, ProfileSet& set) {
  if (file.oversized) {
    set.defaults_diagnostics.push_back(FileDiagnostic(file.path, "file is larger than 1 MiB"));
    return;
  }
  Decoded<RepositoryDefaults> decoded = DecodeRepositoryDefaults(file.path, file.content, options);
  if (!decoded.ok()) {
    set.defaults_diagnostics = std::move(decoded.diagnostics);
    return;
  }
  set.defaults = *std::move(decoded.value);
  for (const SupportMatrixEntry& row : set.defaults.support_matrix) set.support_matrix.Set(row);
  for (const Version& v : set.defaults.talos_releases) set.release_catalog.AddTalos(v);
  for (const Version& v : set.defaults.kubernetes_releases) set.release_catalog.AddKubernetes(v);
}

// A profile naming a schematic but no factory gets reconciler.yaml's (which may be empty too:
// then the daemon's --image-factory).
void ApplyImageFactoryDefault(const RepositoryDefaults& defaults, ClusterProfile& profile) {
  if (profile.talos_factory && profile.talos_factory->factory.empty()) {
    profile.talos_factory->factory = defaults.image_factory;
  }
}

void ApplyUpdatePolicyDefaults(const RepositoryDefaults& defaults, ClusterProfile& profile) {
  const UpdatePolicy repository = MergeUpdatePolicy(UpdatePolicy{}, defaults.updates);
  profile.updates = MergeUpdatePolicy(repository, profile.updates_overrides);
}

void DecodeProfile(const SourceFile& file, FileRole role, const ValidationOptions& options,
                   const SchematicFiles& schematic_files, ProfileSet& set) {
  InvalidProfile invalid{
      .file = file.path, .cluster = ClusterNameFromPath(file.path), .diagnostics = {}};
  if (!set.defaults_diagnostics.empty()) {
    invalid.diagnostics.push_back(FileDiagnostic(
        file.path, "reconciler.yaml is invalid; no profile is acted on until it is fixed"));
  }
  if (role == FileRole::kWrongExtension) {
    invalid.diagnostics.push_back(
        FileDiagnostic(file.path, "profiles must be named clusters/<name>.yaml, not .yml"));
  } else if (file.oversized) {
    invalid.diagnostics.push_back(FileDiagnostic(file.path, "file is larger than 1 MiB"));
  } else {
    Decoded<ClusterProfile> decoded =
        DecodeClusterProfile(file.path, file.content, set.defaults.policy, options, schematic_files);
    if (decoded.ok() && invalid.diagnostics.empty()) {
      ApplyImageFactoryDefault(set.defaults, *decoded.value);
      ApplyUpdatePolicyDefaults(set.defaults, *decoded.value);
      set.profiles.push_back(*std::move(decoded.value));
      return;
    }
    invalid.diagnostics.insert(invalid.diagnostics.end(), decoded.diagnostics.begin(),
                               decoded.diagnostics.end());
  }
  set.invalid.push_back(std::move(invalid));
}

}  // namespace

ProfileSet DecodeProfileSet(const std::vector<SourceFile>& files,
                            const ValidationOptions& options) {
  ProfileSet set;
  set.support_matrix = SupportMatrix::BuiltIn();
  set.release_catalog = ReleaseCatalog::BuiltIn();
  for (const SourceFile& file : files) {
    if (file.path == kDefaultsPath) DecodeDefaults(file, options, set);
  }
  const SchematicFiles schematic_files = CollectSchematicFiles(files);
  for (const SourceFile& file : files) {
    const FileRole role = RoleOf(file.path);
    if (role != FileRole::kIgnored) DecodeProfile(file, role, options, schematic_files, set);
  }
  std::sort(set.profiles.begin(), set.profiles.end(),
            [](const ClusterProfile& a, const ClusterProfile& b) { return a.name < b.name; });
  std::sort(set.invalid.begin(), set.invalid.end(),
            [](const InvalidProfile& a, const InvalidProfile& b) { return a.file < b.file; });
  ValidatePromotions(set);
  return set;
}

bool ProfileSet::Knows(std::string_view cluster) const {
  return std::any_of(profiles.begin(), profiles.end(),
                     [&](const ClusterProfile& p) { return p.name == cluster; }) ||
         std::any_of(invalid.begin(), invalid.end(),
                     [&](const InvalidProfile& p) { return p.cluster == cluster; });
}

const ClusterProfile* ProfileSet::Find(std::string_view cluster) const {
  auto it = std::lower_bound(
      profiles.begin(), profiles.end(), cluster,
      [](const ClusterProfile& p, std::string_view name) { return p.name < name; });
  return it != profiles.end() && it->name == cluster ? &*it : nullptr;
}

}  // namespace tr::core
