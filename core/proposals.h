// Release proposals: the version bumps the reconciler proposes as pull requests, within each
// profile's `updates` policy (core/update_policy.h). docs/proposals.md tells the rules:
//  - Clusters are proposed in groups: a promotion chain (spec.promotion) is one group, and
//    clusters naming the same `updates.group` are one. The group's policy is the strictest of
//    its clusters' (the lowest level, every ignore, the longest minimumReleaseAge).
//  - A group is proposed only once every cluster runs the versions its profile asks for, so a
//    proposal is always one hop from what runs.
//  - One hop per proposal, from the group's oldest versions: the newest patch of the minor,
//    or (level minor) the newest release of the next minor when the matrix allows the upgrade,
//    with the Kubernetes minor that Talos minor requires. Every cluster of the group below the
//    target moves to it; a cluster already there or past it is left alone.
//  - Every proposed profile is planned (core/planner.h) against its current versions: a
//    proposal the planner would block, or that would take more than one hop, is not made.
//
// Pure: time is passed in. Thread-compatible.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/profile_set.h"
#include "core/timestamp.h"
#include "core/update_policy.h"
#include "core/version.h"

namespace tr::core {

// A release, and since when the reconciler has known it (its age for minimumReleaseAge).
struct KnownRelease {
  Version version;
  TimePoint known_since;
};

struct KnownReleases {
  std::vector<KnownRelease> talos;
  std::vector<KnownRelease> kubernetes;
  std::vector<Version> broken_talos;  // never proposed (the Image Factory's broken list)
};

// What every node of a cluster runs; unset when the nodes differ or were not seen.
struct RunningVersions {
  std::optional<Version> talos;
  std::optional<Version> kubernetes;
};

struct VersionChange {
  Version from;
  Version to;
};

struct ProposedCluster {
  std::string name;
  std::string file;  // the profile's path
  std::optional<VersionChange> talos;
  std::optional<VersionChange> kubernetes;
};

struct Proposal {
  std::string group;
  std::string branch;  // talos-reconciler/update/<group>
  std::string title;
  // The group's change: from its oldest versions to the target; unset when unchanged.
  std::optional<VersionChange> talos;
  std::optional<VersionChange> kubernetes;
  std::vector<ProposedCluster> clusters;    // those that change, in promotion order
  std::vector<std::string> group_clusters;  // every cluster of the group, in promotion order
  std::optional<UpdateSchedule> schedule;   // the group's, from its first cluster
};

// Why a group has no proposal now, when it has a policy that could make one.
struct ProposalSkip {
  std::string group;
  std::string reason;
};

struct ProposalOutcome {
  std::vector<Proposal> proposals;  // by group name
  std::vector<ProposalSkip> skipped;
};

inline constexpr std::string_view kProposalBranchPrefix = "talos-reconciler/update/";

// `running`: by cluster; a cluster missing from it is not known to run anything.
ProposalOutcome ProposeUpdates(const ProfileSet& set, const KnownReleases& releases,
                               const std::map<std::string, RunningVersions>& running,
                               TimePoint now);

// The releases `catalog` knows, each known since `since`.
KnownReleases CatalogReleases(const ReleaseCatalog& catalog, TimePoint since);

}  // namespace tr::core
