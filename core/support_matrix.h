// The Talos <-> Kubernetes support matrix and the release catalog.
//
// The matrix says, per Talos minor, which Kubernetes minors it runs and the oldest Talos
// version a node may be upgraded from (docs/talos-api.md §7, the limits enforced in
// code by talosctl). The catalog knows the latest patch of each Talos and Kubernetes minor,
// which the planner needs for intermediate hops and the status reports as `available`, and the
// Talos releases marked broken (the Image Factory's `/versions?broken=true`), which the planner
// never upgrades a node to and proposals never offer. Both are built in and extendable from
// reconciler.yaml; the broken marks come from the factory only.
//
// Values only; thread-compatible.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "core/version.h"

namespace tr::core {

struct SupportMatrixEntry {
  MinorVersion talos;
  MinorVersion kubernetes_min;
  MinorVersion kubernetes_max;
  Version minimum_upgrade_from;  // oldest Talos version this minor's installer upgrades from
};

class SupportMatrix {
 public:
  // Talos 1.5 through 1.15, from the facts file.
  static SupportMatrix BuiltIn();

  // Adds a row, or replaces the row of the same Talos minor.
  void Set(const SupportMatrixEntry& entry);

  // The row of a Talos minor; nullopt when the minor is unknown.
  std::optional<SupportMatrixEntry> Find(MinorVersion talos) const;
  // Whether Talos `talos` runs Kubernetes `kubernetes`. False for an unknown Talos minor.
  bool Supports(MinorVersion talos, MinorVersion kubernetes) const;
  // Whether a node on `from` may be upgraded straight to Talos minor `to`.
  bool AllowsUpgrade(const Version& from, MinorVersion to) const;
  // Every known Talos minor, oldest first.
  std::vector<MinorVersion> TalosMinors() const;

 private:
  std::map<MinorVersion, SupportMatrixEntry> rows_;
};

class ReleaseCatalog {
 public:
  // The latest patches known when this build was made.
  static ReleaseCatalog BuiltIn();

  // Records a release; a newer patch of the same minor replaces the older one.
  void AddTalos(const Version& version);
  void AddKubernetes(const Version& version);
  // Marks a Talos release broken: withdrawn by its publisher, not to be installed.
  void MarkTalosBroken(const Version& version);

  std::optional<Version> LatestTalos(MinorVersion minor) const;
  std::optional<Version> LatestKubernetes(MinorVersion minor) const;
  // The newest known release (no prereleases), if any.
  std::optional<Version> NewestTalos() const;
  std::optional<Version> NewestKubernetes() const;
  // The latest patch of every minor, oldest first.
  std::vector<Version> TalosReleases() const;
  std::vector<Version> KubernetesReleases() const;
  bool IsTalosBroken(const Version& version) const;
  std::vector<Version> BrokenTalos() const;  // oldest first

 private:
  std::map<MinorVersion, Version> talos_;
  std::map<MinorVersion, Version> kubernetes_;
  std::set<Version> broken_talos_;
};

}  // namespace tr::core
