#include "core/support_matrix.h"

#include <string_view>

namespace tr::core {
namespace {

Version MustParse(std::string_view text) {
  // Only used on the literals below, which the tests parse too.
  return *ParseTalosVersion(text);
}

struct BuiltInRow {
  int talos_minor;
  int kubernetes_min_minor;
  int kubernetes_max_minor;
  std::string_view minimum_upgrade_from;
};

// docs/talos-api.md §7: the code limits of pkg/machinery/compatibility/talos1X.
constexpr BuiltInRow kBuiltInMatrix[] = {
    {5, 26, 28, "1.2.0"},   {6, 24, 29, "1.3.0"},   {7, 25, 30, "1.4.0"},   {8, 26, 31, "1.5.0"},
    {9, 27, 32, "1.8.0"},   {10, 28, 33, "1.8.0"},  {11, 29, 34, "1.9.0"},  {12, 30, 35, "1.10.0"},
    {13, 31, 36, "1.11.0"}, {14, 32, 37, "1.12.0"}, {15, 33, 38, "1.13.0"},
};

// Release builds known to exist when this catalog was compiled. Intermediate hops use
// these; a repository adds newer ones under `releases` in reconciler.yaml.
constexpr std::string_view kBuiltInTalosReleases[] = {
    "1.5.5", "1.6.7", "1.7.7", "1.8.4", "1.9.6", "1.10.8", "1.11.6", "1.12.0", "1.13.9",
};
constexpr std::string_view kBuiltInKubernetesReleases[] = {
    "1.24.17", "1.25.16", "1.26.15", "1.27.16", "1.28.15", "1.29.7", "1.30.5",
    "1.31.4",  "1.32.4",  "1.33.6",  "1.34.1",  "1.35.4",  "1.36.3",
};

void AddLatest(std::map<MinorVersion, Version>& by_minor, const Version& version) {
  auto [it, inserted] = by_minor.try_emplace(version.Minor(), version);
  if (!inserted && it->second < version) it->second = version;
}

std::optional<Version> Lookup(const std::map<MinorVersion, Version>& by_minor, MinorVersion minor) {
  auto it = by_minor.find(minor);
  if (it == by_minor.end()) return std::nullopt;
  return it->second;
}

std::optional<Version> Newest(const std::map<MinorVersion, Version>& by_minor) {
  for (auto it = by_minor.rbegin(); it != by_minor.rend(); ++it) {
    if (it->second.IsRelease()) return it->second;
  }
  return std::nullopt;
}

}  // namespace

SupportMatrix SupportMatrix::BuiltIn() {
  SupportMatrix matrix;
  for (const BuiltInRow& row : kBuiltInMatrix) {
    matrix.Set({.talos = {1, row.talos_minor},
                .kubernetes_min = {1, row.kubernetes_min_minor},
                .kubernetes_max = {1, row.kubernetes_max_minor},
                .minimum_upgrade_from = MustParse(row.minimum_upgrade_from)});
  }
  return matrix;
}

void SupportMatrix::Set(const SupportMatrixEntry& entry) { rows_[entry.talos] = entry; }

std::optional<SupportMatrixEntry> SupportMatrix::Find(MinorVersion talos) const {
  auto it = rows_.find(talos);
  if (it == rows_.end()) return std::nullopt;
  return it->second;
}

bool SupportMatrix::Supports(MinorVersion talos, MinorVersion kubernetes) const {
  std::optional<SupportMatrixEntry> row = Find(talos);
  return row && row->kubernetes_min <= kubernetes && kubernetes <= row->kubernetes_max;
}

bool SupportMatrix::AllowsUpgrade(const Version& from, MinorVersion to) const {
  std::optional<SupportMatrixEntry> row = Find(to);
  if (!row) return false;
  // A development build of the minimum counts: compare the semver core only.
  Version core = from;
  core.prerelease.clear();
  core.commits_since_tag = 0;
  core.commit.clear();
  core.dirty = false;
  return row->minimum_upgrade_from <= core;
}

std::vector<MinorVersion> SupportMatrix::TalosMinors() const {
  std::vector<MinorVersion> minors;
  for (const auto& [minor, row] : rows_) minors.push_back(minor);
  return minors;
}

ReleaseCatalog ReleaseCatalog::BuiltIn() {
  ReleaseCatalog catalog;
  for (std::string_view v : kBuiltInTalosReleases) catalog.AddTalos(MustParse(v));
  for (std::string_view v : kBuiltInKubernetesReleases) catalog.AddKubernetes(MustParse(v));
  return catalog;
}

void ReleaseCatalog::AddTalos(const Version& version) { AddLatest(talos_, version); }
void ReleaseCatalog::AddKubernetes(const Version& version) { AddLatest(kubernetes_, version); }

std::optional<Version> ReleaseCatalog::LatestTalos(MinorVersion minor) const {
  return Lookup(talos_, minor);
}
std::optional<Version> ReleaseCatalog::LatestKubernetes(MinorVersion minor) const {
  return Lookup(kubernetes_, minor);
}
std::optional<Version> ReleaseCatalog::NewestTalos() const { return Newest(talos_); }
std::optional<Version> ReleaseCatalog::NewestKubernetes() const { return Newest(kubernetes_); }

std::vector<Version> ReleaseCatalog::TalosReleases() const {
  std::vector<Version> versions;
  for (const auto& [minor, v] : talos_) versions.push_back(v);
  return versions;
}

void ReleaseCatalog::MarkTalosBroken(const Version& version) { broken_talos_.insert(version); }

bool ReleaseCatalog::IsTalosBroken(const Version& version) const {
  return broken_talos_.contains(version);
}

std::vector<Version> ReleaseCatalog::BrokenTalos() const {
  return {broken_talos_.begin(), broken_talos_.end()};
}

std::vector<Version> ReleaseCatalog::KubernetesReleases() const {
  std::vector<Version> versions;
  for (const auto& [minor, v] : kubernetes_) versions.push_back(v);
  return versions;
}

}  // namespace tr::core
