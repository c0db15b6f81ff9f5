#include "core/proposals.h"

#include <algorithm>
#include <functional>
#include <set>

#include "core/observed.h"
#include "core/planner.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

struct Group {
  std::string name;
  std::vector<const ClusterProfile*> members;  // in promotion order
  UpdatePolicy policy;                         // the strictest of the members'
};

// Union-find over cluster names.
class Components {
 public:
  std::string Find(const std::string& name) {
    auto it = parent_.find(name);
    if (it == parent_.end()) return parent_[name] = name;
    if (it->second == name) return name;
    return it->second = Find(it->second);
  }
  void Join(const std::string& a, const std::string& b) {
    const std::string ra = Find(a);
    const std::string rb = Find(b);
    if (ra != rb) parent_[std::max(ra, rb)] = std::min(ra, rb);
  }

 private:
  std::map<std::string, std::string> parent_;
};

// `members` sorted so that every cluster comes after the clusters its promotion names (ties by
// name, the input's order).
std::vector<const ClusterProfile*> PromotionOrder(std::vector<const ClusterProfile*> members) {
  std::vector<const ClusterProfile*> ordered;
  std::set<std::string> placed;
  while (!members.empty()) {
    auto ready = std::find_if(members.begin(), members.end(), [&](const ClusterProfile* p) {
      if (!p->promotion) return true;
      return std::all_of(
          p->promotion->after.begin(), p->promotion->after.end(), [&](const Promotion::After& a) {
            return placed.contains(a.cluster) ||
                   std::none_of(members.begin(), members.end(),
                                [&](const ClusterProfile* m) { return m->name == a.cluster; });
          });
    });
    if (ready == members.end()) ready = members.begin();  // a cycle: validation reports it
    placed.insert((*ready)->name);
    ordered.push_back(*ready);
    members.erase(ready);
  }
  return ordered;
}

UpdatePolicy Strictest(const std::vector<const ClusterProfile*>& members) {
  UpdatePolicy policy = members.front()->updates;
  for (const ClusterProfile* p : members) {
    policy.talos = std::min(policy.talos, p->updates.talos);
    policy.kubernetes = std::min(policy.kubernetes, p->updates.kubernetes);
    policy.minimum_release_age =
        std::max(policy.minimum_release_age, p->updates.minimum_release_age);
    if (p != members.front()) {
      policy.ignore.insert(policy.ignore.end(), p->updates.ignore.begin(), p->updates.ignore.end());
    }
  }
  return policy;
}

std::vector<Group> BuildGroups(const ProfileSet& set, std::vector<ProposalSkip>& skipped) {
  Components components;
  std::map<std::string, std::string> first_of_group;  // explicit group name -> a member
  for (const ClusterProfile& p : set.profiles) {
    components.Find(p.name);
    if (p.promotion) {
      for (const Promotion::After& a : p.promotion->after) components.Join(p.name, a.cluster);
    }
    if (!p.updates.group.empty()) {
      auto [it, inserted] = first_of_group.emplace(p.updates.group, p.name);
      if (!inserted) components.Join(p.name, it->second);
    }
  }
  std::map<std::string, std::vector<const ClusterProfile*>> by_root;
  for (const ClusterProfile& p : set.profiles) by_root[components.Find(p.name)].push_back(&p);
  std::vector<Group> groups;
  for (auto& [root, members] : by_root) {
    Group group{.name = "", .members = PromotionOrder(members), .policy = {}};
    std::set<std::string> names;
    for (const ClusterProfile* p : group.members) {
      if (!p->updates.group.empty()) names.insert(p->updates.group);
    }
    group.name = names.empty() ? group.members.front()->name : *names.begin();
    if (names.size() > 1) {
      skipped.push_back({.group = group.name,
                         .reason = fmt::format("its clusters name different groups ({}); a "
                                               "promotion chain is one group",
                                               fmt::join(names, ", "))});
      continue;
    }
    group.policy = Strictest(group.members);
    groups.push_back(std::move(group));
  }
  std::sort(groups.begin(), groups.end(),
            [](const Group& a, const Group& b) { return a.name < b.name; });
  return groups;
}

// The releases a proposal may use: releases only, not ignored, not broken, and old enough.
// `young` collects those held back by their age.
std::vector<Version> Eligible(const std::vector<KnownRelease>& known, const UpdatePolicy& policy,
                              TimePoint now, std::vector<std::string>& young,
                              const std::vector<Version>& broken = {}) {
  std::vector<Version> versions;
  for (const KnownRelease& r : known) {
    if (!r.version.IsRelease() || IsIgnored(policy, r.version)) continue;
    if (std::find(broken.begin(), broken.end(), r.version) != broken.end()) continue;
    if (now - r.known_since < policy.minimum_release_age) {
      young.push_back(r.version.ToString());
      continue;
    }
    versions.push_back(r.version);
  }
  std::sort(versions.begin(), versions.end());
  versions.erase(std::unique(versions.begin(), versions.end()), versions.end());
  return versions;
}

// The newest of `versions` in `minor` that is newer than `after`.
std::optional<Version> NewestIn(const std::vector<Version>& versions, MinorVersion minor,
                                const Version& after) {
  std::optional<Version> best;
  for (const Version& v : versions) {
    if (v.Minor() == minor && after < v) best = v;
  }
  return best;
}

struct Targets {
  std::optional<Version> talos;
  std::optional<Version> kubernetes;
};

// The Kubernetes target that goes with Talos `talos_to` (nullopt: Talos unchanged), or nullopt
// when the group cannot take it in one hop. `k8s_from`: the group's oldest Kubernetes.
std::optional<Targets> WithKubernetes(const Group& group, std::optional<Version> talos_to,
                                      const Version& k8s_from, const std::vector<Version>& k8s,
                                      const SupportMatrix& matrix) {
  // The Kubernetes minors every cluster's Talos (after the proposal) runs.
  MinorVersion lowest_max{1000, 0};
  MinorVersion highest_min{0, 0};
  for (const ClusterProfile* p : group.members) {
    Version talos = p->talos_version;
    if (talos_to && talos < *talos_to) talos = *talos_to;
    std::optional<SupportMatrixEntry> row = matrix.Find(talos.Minor());
    if (!row) return std::nullopt;
    lowest_max = std::min(lowest_max, row->kubernetes_max);
    highest_min = std::max(highest_min, row->kubernetes_min);
  }
  MinorVersion minor = k8s_from.Minor();
  if (group.policy.kubernetes == UpdateLevel::kMinor && minor.Next() <= lowest_max &&
      NewestIn(k8s, minor.Next(), k8s_from)) {
    minor = minor.Next();
  }
  if (minor < highest_min) minor = minor.Next();  // the Talos minor requires it
  if (minor < highest_min || lowest_max < minor) return std::nullopt;
  Targets targets{.talos = talos_to, .kubernetes = std::nullopt};
  const bool required = minor != k8s_from.Minor();
  if (required || group.policy.kubernetes != UpdateLevel::kNone) {
    targets.kubernetes = NewestIn(k8s, minor, k8s_from);
    if (required && !targets.kubernetes) return std::nullopt;
  }
  return targets;
}

std::string ListNames(const std::vector<std::string>& names) {
  return fmt::format("{}", fmt::join(names, ", "));
}

ClusterProfile Proposed(const ClusterProfile& profile, const ProposedCluster& change) {
  ClusterProfile proposed = profile;
  if (change.talos) proposed.talos_version = change.talos->to;
  if (change.kubernetes) proposed.kubernetes_version = change.kubernetes->to;
  return proposed;
}

// Nodes all running `profile`'s present versions, so the planner sees what the proposal asks.
ObservedCluster AsRunning(const ClusterProfile& profile) {
  ObservedCluster observed;
  observed.name = profile.name;
  for (const NodeSpec& node : profile.nodes) {
    NodeObservation seen;
    seen.name = node.name;
    seen.talos = profile.talos_version;
    seen.kubelet = profile.kubernetes_version;
    seen.etcd_member = node.role == NodeRole::kControlPlane;
    if (!profile.talos_schematic_id.empty())
      seen.schematic = DesiredSchematicId(profile, node.name);
    observed.nodes.push_back(std::move(seen));
  }
  return observed;
}

// `profile` with the installers of its schematics taken as known: what is checked is the
// version path, and a schematic's ID is resolved at its factory only once the proposal is
// merged.
ClusterProfile WithInstallersKnown(ClusterProfile profile) {
  if (!profile.talos_factory) return profile;
  if (profile.talos_image.empty()) profile.talos_image = "proposal-check/installer";
  if (profile.talos_schematic_id.empty()) profile.talos_schematic_id = "proposal-check";
  for (NodeSpec& node : profile.nodes) {
    if (!node.schematic) continue;
    if (node.talos_image.empty()) node.talos_image = "proposal-check/installer-" + node.name;
    if (node.talos_schematic_id.empty()) node.talos_schematic_id = "proposal-check-" + node.name;
  }
  return profile;
}

// Empty when the planner takes `change` in one hop per component; else why not.
std::string PlannerRefusal(const ClusterProfile& written, const ProposedCluster& change,
                           const ProfileSet& set) {
  const ClusterProfile profile = WithInstallersKnown(written);
  const ClusterPlan plan = PlanCluster(Proposed(profile, change), AsRunning(profile),
                                       set.support_matrix, set.release_catalog);
  if (plan.status == PlanStatus::kBlocked) return plan.message;
  int talos_steps = 0;
  int kubernetes_steps = 0;
  for (const PlanStep& step : plan.steps) {
    (step.type == StepType::kTalos ? talos_steps : kubernetes_steps) += 1;
  }
  if (talos_steps > 1 || kubernetes_steps > 1) {
    return fmt::format("the planner needs {} Talos and {} Kubernetes steps", talos_steps,
                       kubernetes_steps);
  }
  return "";
}

std::string Title(const Proposal& proposal) {
  std::vector<std::string> parts;
  if (proposal.talos) parts.push_back("Talos " + proposal.talos->to.ToString());
  if (proposal.kubernetes) parts.push_back("Kubernetes " + proposal.kubernetes->to.ToString());
  std::vector<std::string> names;
  for (const ProposedCluster& c : proposal.clusters) names.push_back(c.name);
  return fmt::format("Upgrade {} to {}", ListNames(names), fmt::join(parts, " and "));
}

// Why `group` must wait, or "" when every cluster runs what its profile asks.
std::string Unsettled(const Group& group, const std::map<std::string, RunningVersions>& running) {
  for (const ClusterProfile* p : group.members) {
    auto it = running.find(p->name);
    if (it == running.end() || !it->second.talos || !it->second.kubernetes) {
      return fmt::format("{} is not known to run one Talos and one Kubernetes version", p->name);
    }
    if (*it->second.talos != p->talos_version || *it->second.kubernetes != p->kubernetes_version) {
      return fmt::format("{} runs Talos {} and Kubernetes {}, not yet its profile's {} and {}",
                         p->name, it->second.talos->ToString(), it->second.kubernetes->ToString(),
                         p->talos_version.ToString(), p->kubernetes_version.ToString());
    }
  }
  return "";
}

// The group's targets: the next minor when allowed and possible, else the newest patch.
std::optional<Targets> ChooseTargets(const Group& group, const std::vector<Version>& talos,
                                     const std::vector<Version>& k8s, const SupportMatrix& matrix,
                                     const Version& talos_from, const Version& k8s_from) {
  std::vector<std::optional<Version>> talos_choices;
  if (group.policy.talos == UpdateLevel::kMinor &&
      matrix.AllowsUpgrade(talos_from, talos_from.Minor().Next())) {
    if (auto next = NewestIn(talos, talos_from.Minor().Next(), talos_from)) {
      talos_choices.push_back(next);
    }
  }
  if (group.policy.talos != UpdateLevel::kNone) {
    if (auto patch = NewestIn(talos, talos_from.Minor(), talos_from)) {
      talos_choices.push_back(patch);
    }
  }
  talos_choices.push_back(std::nullopt);  // Kubernetes alone
  for (const std::optional<Version>& choice : talos_choices) {
    std::optional<Targets> targets = WithKubernetes(group, choice, k8s_from, k8s, matrix);
    if (targets && (targets->talos || targets->kubernetes)) return targets;
  }
  return std::nullopt;
}

std::optional<Proposal> ProposeGroup(const Group& group, const ProfileSet& set,
                                     const KnownReleases& releases, TimePoint now,
                                     std::vector<ProposalSkip>& skipped) {
  const auto skip = [&](std::string reason) {
    skipped.push_back({.group = group.name, .reason = std::move(reason)});
    return std::nullopt;
  };
  std::vector<std::string> young;
  const std::vector<Version> talos =
      Eligible(releases.talos, group.policy, now, young, releases.broken_talos);
  const std::vector<Version> k8s = Eligible(releases.kubernetes, group.policy, now, young);
  Version talos_from = group.members.front()->talos_version;
  Version k8s_from = group.members.front()->kubernetes_version;
  for (const ClusterProfile* p : group.members) {
    talos_from = std::min(talos_from, p->talos_version);
    k8s_from = std::min(k8s_from, p->kubernetes_version);
  }
  std::optional<Targets> targets =
      ChooseTargets(group, talos, k8s, set.support_matrix, talos_from, k8s_from);
  if (!targets) {
    if (!young.empty()) {
      return skip(fmt::format("{} not proposed yet: known for less than minimumReleaseAge",
                              ListNames(young)));
    }
    return std::nullopt;
  }
  Proposal proposal;
  proposal.group = group.name;
  proposal.branch = std::string(kProposalBranchPrefix) + group.name;
  proposal.schedule = group.members.front()->updates.schedule;
  if (targets->talos) proposal.talos = VersionChange{.from = talos_from, .to = *targets->talos};
  if (targets->kubernetes) {
    proposal.kubernetes = VersionChange{.from = k8s_from, .to = *targets->kubernetes};
  }
  for (const ClusterProfile* p : group.members) {
    proposal.group_clusters.push_back(p->name);
    ProposedCluster change{.name = p->name, .file = p->file, .talos = {}, .kubernetes = {}};
    if (targets->talos && p->talos_version < *targets->talos) {
      change.talos = VersionChange{.from = p->talos_version, .to = *targets->talos};
    }
    if (targets->kubernetes && p->kubernetes_version < *targets->kubernetes) {
      change.kubernetes = VersionChange{.from = p->kubernetes_version, .to = *targets->kubernetes};
    }
    if (!change.talos && !change.kubernetes) continue;
    if (std::string why = PlannerRefusal(*p, change, set); !why.empty()) {
      return skip(fmt::format("{}: the planner would not take it in one hop: {}", p->name, why));
    }
    proposal.clusters.push_back(std::move(change));
  }
  if (proposal.clusters.empty()) return std::nullopt;
  proposal.title = Title(proposal);
  return proposal;
}

}  // namespace

ProposalOutcome ProposeUpdates(const ProfileSet& set, const KnownReleases& releases,
                               const std::map<std::string, RunningVersions>& running,
                               TimePoint now) {
  ProposalOutcome outcome;
  for (const Group& group : BuildGroups(set, outcome.skipped)) {
    if (group.policy.talos == UpdateLevel::kNone && group.policy.kubernetes == UpdateLevel::kNone) {
      continue;
    }
    if (std::string why = Unsettled(group, running); !why.empty()) {
      outcome.skipped.push_back({.group = group.name, .reason = "waiting: " + why});
      continue;
    }
    if (std::optional<Proposal> p = ProposeGroup(group, set, releases, now, outcome.skipped)) {
      outcome.proposals.push_back(*std::move(p));
    }
  }
  return outcome;
}

KnownReleases CatalogReleases(const ReleaseCatalog& catalog, TimePoint since) {
  KnownReleases known;
  for (const Version& v : catalog.TalosReleases()) known.talos.push_back({v, since});
  for (const Version& v : catalog.KubernetesReleases()) known.kubernetes.push_back({v, since});
  known.broken_talos = catalog.BrokenTalos();
  return known;
}

}  // namespace tr::core
