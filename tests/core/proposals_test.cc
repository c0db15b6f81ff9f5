#include "core/proposals.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/profile_set.h"
#include "fmt/format.h"
#include "tests/core/diagnostic_strings.h"

namespace tr::core {
namespace {

using std::chrono::hours;
using testing::ElementsAre;
using testing::HasSubstr;
using testing::IsEmpty;

const TimePoint kProposalNow = TimePoint{} + hours(24 * 365 * 50);

struct Cluster {
  std::string name;
  std::string talos;
  std::string kubernetes;
  std::string extra;  // more of spec, indented two spaces
};

Cluster C(std::string name, std::string talos = "1.12.0", std::string kubernetes = "1.34.1",
          std::string extra = "") {
  return {std::move(name), std::move(talos), std::move(kubernetes), std::move(extra)};
}

Cluster WithSpec(std::string name, std::string extra) {
  return C(std::move(name), "1.12.0", "1.34.1", std::move(extra));
}

SourceFile ProfileFile(const Cluster& c) {
  return SourceFile{.path = fmt::format("clusters/{}.yaml", c.name),
                    .content = fmt::format(R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: ClusterProfile
metadata: {{name: {0}}}
spec:
  endpoints: [10.0.0.11]
  credentials: {0}
  talos: {{version: {1}, image: ghcr.io/siderolabs/installer}}
  kubernetes: {{version: {2}}}
  nodes:
    - {{name: cp-0, address: 10.0.0.11, role: controlplane}}
    - {{name: w-0, address: 10.0.0.21, role: worker}}
{3})",
                                           c.name, c.talos, c.kubernetes, c.extra),
                    .oversized = false};
}

SourceFile Defaults(std::string_view updates) {
  return SourceFile{.path = "reconciler.yaml",
                    .content = fmt::format(R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: RepositoryDefaults
updates:
{})",
                                           updates),
                    .oversized = false};
}

ProfileSet Decode(const std::string& updates, const std::vector<Cluster>& clusters) {
  std::vector<SourceFile> files{Defaults(updates)};
  for (const Cluster& c : clusters) files.push_back(ProfileFile(c));
  ProfileSet set = DecodeProfileSet(files);
  for (const InvalidProfile& p : set.invalid) {
    ADD_FAILURE() << p.file << ": " << testing::PrintToString(DiagnosticStrings(p.diagnostics));
  }
  return set;
}

Version V(std::string_view text) { return *ParseKubernetesVersion(text); }

KnownReleases Releases(std::vector<std::string> talos, std::vector<std::string> kubernetes,
                       TimePoint since = TimePoint{}) {
  KnownReleases known;
  for (const std::string& v : talos) known.talos.push_back({V(v), since});
  for (const std::string& v : kubernetes) known.kubernetes.push_back({V(v), since});
  return known;
}

// Every cluster runs what its profile asks.
std::map<std::string, RunningVersions> Settled(const ProfileSet& set) {
  std::map<std::string, RunningVersions> running;
  for (const ClusterProfile& p : set.profiles) {
    running[p.name] = {.talos = p.talos_version, .kubernetes = p.kubernetes_version};
  }
  return running;
}

ProposalOutcome Propose(const ProfileSet& set, const KnownReleases& known) {
  return ProposeUpdates(set, known, Settled(set), kProposalNow);
}

std::vector<Cluster> Chain() {
  return {C("lab"), WithSpec("staging", "  promotion: {after: [lab]}\n"),
          WithSpec("prod", "  promotion: {after: [staging], soak: 24h}\n")};
}

std::vector<std::string> Names(const Proposal& p) {
  std::vector<std::string> names;
  for (const ProposedCluster& c : p.clusters) names.push_back(c.name);
  return names;
}

TEST(ProposalsTest, APromotionChainIsOneProposalOfItsNewestPatch) {
  const ProfileSet set = Decode("  talos: patch\n", Chain());
  const ProposalOutcome out = Propose(set, Releases({"1.12.2", "1.12.3", "1.13.1"}, {}));
  ASSERT_EQ(out.proposals.size(), 1u);
  const Proposal& p = out.proposals[0];
  EXPECT_EQ(p.group, "lab");
  EXPECT_EQ(p.branch, "talos-reconciler/update/lab");
  EXPECT_THAT(Names(p), ElementsAre("lab", "staging", "prod"));
  ASSERT_TRUE(p.talos.has_value());
  EXPECT_EQ(p.talos->from, V("1.12.0"));
  EXPECT_EQ(p.talos->to, V("1.12.3"));
  EXPECT_FALSE(p.kubernetes.has_value());
  EXPECT_EQ(p.clusters[2].file, "clusters/prod.yaml");
  EXPECT_EQ(p.title, "Upgrade lab, staging, prod to Talos 1.12.3");
}

TEST(ProposalsTest, NoPolicyProposesNothing) {
  const ProfileSet set = Decode("  group: fleet\n", Chain());
  const ProposalOutcome out = Propose(set, Releases({"1.12.3"}, {"1.34.3"}));
  EXPECT_THAT(out.proposals, IsEmpty());
  EXPECT_THAT(out.skipped, IsEmpty());
}

TEST(ProposalsTest, IgnoredVersionsAreNeverProposed) {
  ProfileSet set = Decode("  talos: patch\n  ignore: [1.12.3]\n", Chain());
  ProposalOutcome out = Propose(set, Releases({"1.12.2", "1.12.3"}, {}));
  ASSERT_EQ(out.proposals.size(), 1u);
  EXPECT_EQ(out.proposals[0].talos->to, V("1.12.2"));

  set = Decode("  talos: patch\n  ignore: [1.12.x]\n", Chain());
  EXPECT_THAT(Propose(set, Releases({"1.12.2", "1.12.3"}, {})).proposals, IsEmpty());

  set = Decode("  talos: patch\n  ignore: ['>=1.12.2 <1.12.4']\n", Chain());
  out = Propose(set, Releases({"1.12.1", "1.12.2", "1.12.3"}, {}));
  ASSERT_EQ(out.proposals.size(), 1u);
  EXPECT_EQ(out.proposals[0].talos->to, V("1.12.1"));
}

// A release the Image Factory marks broken is never proposed, for a chain neither: the newest
// patch that is not broken is.
TEST(ProposalsTest, ABrokenReleaseIsNeverProposed) {
  const ProfileSet set = Decode("  talos: patch\n", Chain());
  KnownReleases known = Releases({"1.12.2", "1.12.3"}, {});
  known.broken_talos = {V("1.12.3")};
  ProposalOutcome out = Propose(set, known);
  ASSERT_EQ(out.proposals.size(), 1u);
  EXPECT_EQ(out.proposals[0].talos->to, V("1.12.2"));
  known.broken_talos.push_back(V("1.12.2"));
  EXPECT_THAT(Propose(set, known).proposals, IsEmpty());
  // From the catalog too.
  ReleaseCatalog catalog;
  catalog.AddTalos(V("1.12.3"));
  catalog.MarkTalosBroken(V("1.12.3"));
  EXPECT_THAT(Propose(set, CatalogReleases(catalog, TimePoint{})).proposals, IsEmpty());
}

TEST(ProposalsTest, AReleaseYoungerThanTheMinimumAgeWaits) {
  const ProfileSet set = Decode("  talos: patch\n  minimumReleaseAge: 7d\n", Chain());
  ProposalOutcome out = Propose(set, Releases({"1.12.3"}, {}, kProposalNow - hours(24 * 6)));
  EXPECT_THAT(out.proposals, IsEmpty());
  ASSERT_EQ(out.skipped.size(), 1u);
  EXPECT_THAT(out.skipped[0].reason, HasSubstr("1.12.3 not proposed yet"));

  out = Propose(set, Releases({"1.12.3"}, {}, kProposalNow - hours(24 * 7)));
  ASSERT_EQ(out.proposals.size(), 1u);
  EXPECT_EQ(out.proposals[0].talos->to, V("1.12.3"));
}

TEST(ProposalsTest, AClusterTwoMinorsBehindGetsTheFirstHopOnly) {
  const ProfileSet set = Decode("  talos: minor\n", {C("old", "1.11.6", "1.33.6")});
  const ProposalOutcome out =
      Propose(set, Releases({"1.11.6", "1.12.4", "1.13.2"}, {"1.33.6", "1.34.3"}));
  ASSERT_EQ(out.proposals.size(), 1u);
  EXPECT_EQ(out.proposals[0].talos->to, V("1.12.4"));
  EXPECT_FALSE(out.proposals[0].kubernetes.has_value());
}

TEST(ProposalsTest, TheNextMinorBringsTheKubernetesMinorItRequires) {
  // Talos 1.13 runs Kubernetes 1.31 to 1.36: a cluster on 1.30 must move one minor with it.
  const ProfileSet set = Decode("  talos: minor\n", {C("c", "1.12.4", "1.30.5")});
  const ProposalOutcome out = Propose(set, Releases({"1.13.2"}, {"1.30.5", "1.31.4", "1.32.4"}));
  ASSERT_EQ(out.proposals.size(), 1u);
  const Proposal& p = out.proposals[0];
  EXPECT_EQ(p.talos->to, V("1.13.2"));
  ASSERT_TRUE(p.kubernetes.has_value());
  EXPECT_EQ(p.kubernetes->to, V("1.31.4"));
  EXPECT_EQ(p.title, "Upgrade c to Talos 1.13.2 and Kubernetes 1.31.4");
}

TEST(ProposalsTest, KubernetesMinorWithinWhatTheTalosVersionRuns) {
  // Talos 1.12 runs Kubernetes up to 1.35: 1.36 is never proposed on it.
  const ProfileSet set = Decode("  kubernetes: minor\n", {C("c", "1.12.4", "1.35.1")});
  ProposalOutcome out = Propose(set, Releases({}, {"1.35.4", "1.36.3"}));
  ASSERT_EQ(out.proposals.size(), 1u);
  EXPECT_EQ(out.proposals[0].kubernetes->to, V("1.35.4"));
  EXPECT_FALSE(out.proposals[0].talos.has_value());
}

TEST(ProposalsTest, ClustersOnDifferentVersionsMoveFromTheOldest) {
  std::vector<Cluster> chain = Chain();
  chain[0].talos = "1.13.1";  // lab is ahead
  const ProfileSet set = Decode("  talos: minor\n", chain);
  const ProposalOutcome out = Propose(set, Releases({"1.12.5", "1.13.4"}, {}));
  ASSERT_EQ(out.proposals.size(), 1u);
  const Proposal& p = out.proposals[0];
  EXPECT_EQ(p.talos->from, V("1.12.0"));
  EXPECT_EQ(p.talos->to, V("1.13.4"));
  ASSERT_EQ(p.clusters.size(), 3u);
  EXPECT_EQ(p.clusters[0].talos->from, V("1.13.1"));  // a patch for lab
  EXPECT_EQ(p.clusters[2].talos->from, V("1.12.0"));  // one minor for prod
}

TEST(ProposalsTest, AClusterAheadOfTheTargetIsLeftAlone) {
  std::vector<Cluster> chain = Chain();
  chain[0].talos = "1.12.5";
  const ProfileSet set = Decode("  talos: patch\n", chain);
  const ProposalOutcome out = Propose(set, Releases({"1.12.3"}, {}));
  ASSERT_EQ(out.proposals.size(), 1u);
  EXPECT_THAT(Names(out.proposals[0]), ElementsAre("staging", "prod"));
  EXPECT_THAT(out.proposals[0].group_clusters, ElementsAre("lab", "staging", "prod"));
}

TEST(ProposalsTest, AGroupWaitsUntilEveryClusterRunsItsProfile) {
  const ProfileSet set = Decode("  talos: patch\n", Chain());
  std::map<std::string, RunningVersions> running = Settled(set);
  running["staging"].talos = V("1.11.6");
  const ProposalOutcome out = ProposeUpdates(set, Releases({"1.12.3"}, {}), running, kProposalNow);
  EXPECT_THAT(out.proposals, IsEmpty());
  ASSERT_EQ(out.skipped.size(), 1u);
  EXPECT_THAT(out.skipped[0].reason, HasSubstr("waiting: staging runs Talos 1.11.6"));
}

TEST(ProposalsTest, ExplicitGroupsJoinClustersAndNameTheBranch) {
  const ProfileSet set =
      Decode("  talos: patch\n", {WithSpec("a", "  updates: {group: edge}\n"),
                                  WithSpec("b", "  updates: {group: edge}\n"), C("c")});
  const ProposalOutcome out = Propose(set, Releases({"1.12.3"}, {}));
  ASSERT_EQ(out.proposals.size(), 2u);
  EXPECT_EQ(out.proposals[0].branch, "talos-reconciler/update/c");
  EXPECT_EQ(out.proposals[1].branch, "talos-reconciler/update/edge");
  EXPECT_THAT(Names(out.proposals[1]), ElementsAre("a", "b"));
}

TEST(ProposalsTest, TheStrictestPolicyOfAGroupApplies) {
  std::vector<Cluster> chain = Chain();
  chain[2].extra += "  updates: {talos: none}\n";
  const ProfileSet set = Decode("  talos: patch\n", chain);
  EXPECT_THAT(Propose(set, Releases({"1.12.3"}, {})).proposals, IsEmpty());
}

TEST(ProposalsTest, ProposalsArePlannableInOneHop) {
  // Property: whatever releases are known, every proposal plans in one hop per component.
  const ProfileSet set =
      Decode("  talos: minor\n  kubernetes: minor\n",
             {C("a", "1.10.8", "1.30.5"), C("b", "1.12.0", "1.33.6"), C("c", "1.13.2", "1.35.4")});
  const ProposalOutcome out = Propose(
      set, Releases({"1.10.9", "1.11.6", "1.12.4", "1.13.9", "1.14.2"},
                    {"1.30.9", "1.31.4", "1.32.4", "1.33.7", "1.34.3", "1.35.5", "1.36.3"}));
  ASSERT_EQ(out.proposals.size(), 3u);
  EXPECT_EQ(out.proposals[0].talos->to, V("1.11.6"));
  EXPECT_EQ(out.proposals[1].talos->to, V("1.13.9"));
  EXPECT_EQ(out.proposals[2].talos->to, V("1.14.2"));
  for (const Proposal& p : out.proposals) {
    for (const ProposedCluster& c : p.clusters) {
      if (c.talos) {
        EXPECT_LE(MinorDistance(c.talos->from.Minor(), c.talos->to.Minor()), 1);
      }
      if (c.kubernetes) {
        EXPECT_LE(MinorDistance(c.kubernetes->from.Minor(), c.kubernetes->to.Minor()), 1);
      }
    }
  }
}

TEST(ProposalsTest, ASchematicProfileIsProposedBeforeItsIdIsKnown) {
  // The factory gives the schematic's ID only once the merged profile is resolved.
  Cluster c = C("edge");
  c.extra = "  updates: {talos: patch}\n";
  ProfileSet set = Decode("  group: edge\n", {c});
  ASSERT_EQ(set.profiles.size(), 1u);
  set.profiles[0].talos_factory = FactoryInstaller{};
  set.profiles[0].talos_image.clear();
  const ProposalOutcome out = Propose(set, Releases({"1.12.3"}, {}));
  ASSERT_EQ(out.proposals.size(), 1u) << (out.skipped.empty() ? "" : out.skipped[0].reason);
  EXPECT_EQ(out.proposals[0].talos->to, V("1.12.3"));
}

TEST(ProposalsTest, CatalogReleasesAreKnownSinceTheGivenTime) {
  ReleaseCatalog catalog;
  catalog.AddTalos(V("1.12.3"));
  catalog.AddKubernetes(V("1.34.3"));
  const KnownReleases known = CatalogReleases(catalog, kProposalNow);
  ASSERT_EQ(known.talos.size(), 1u);
  EXPECT_EQ(known.talos[0].version, V("1.12.3"));
  EXPECT_EQ(known.talos[0].known_since, kProposalNow);
  ASSERT_EQ(known.kubernetes.size(), 1u);
}

}  // namespace
}  // namespace tr::core
