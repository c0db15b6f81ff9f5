// Release proposals end to end: the real daemon with --forge github against the fake forge
// (every request checked against GitHub's REST description), talos-sim's Image Factory as the
// release source (releases added while the daemon runs), and git daemon. One pull request is
// proposed for the lab → staging → prod chain and kept current; an ignored release is never
// proposed, a young one waits for minimumReleaseAge, a closed proposal is not opened again for
// its versions, and the merge of the next one rolls the lab out, promotion carrying staging and
// prod. A cluster two minors behind, in a group of its own, is proposed the first hop only.
#include <gmock/gmock.h>

#include <chrono>
#include <fstream>

#include "fmt/format.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/support/fake_forge.h"
#include "tests/support/process.h"

namespace tr::e2e {
namespace {

using forge_test::FakeForge;
using forge_test::FakePull;
using testing::HasSubstr;
using testing::Not;

constexpr char kProposalToken[] = "ghp_e2eProposalTokenNeverInTheLog";
constexpr auto kProposalTimeout = std::chrono::seconds(60);
constexpr char kLabBranch[] = "talos-reconciler/update/lab";
constexpr char kOldBranch[] = "talos-reconciler/update/old";

std::vector<FakePull> PullsOf(const FakeForge& forge, const std::string& branch) {
  std::vector<FakePull> pulls;
  for (const FakePull& p : forge.Pulls()) {
    if (p.head == branch) pulls.push_back(p);
  }
  return pulls;
}

// The newest pull request of `branch` is open and its title ends with `talos`.
bool OpenFor(const FakeForge& forge, const std::string& branch, const std::string& talos) {
  const std::vector<FakePull> pulls = PullsOf(forge, branch);
  return !pulls.empty() && pulls.back().state == "open" &&
         pulls.back().title.ends_with("Talos " + talos);
}

std::string ChainDefaults() {
  return RepositoryDefaultsYaml() +
         "updates:\n"
         "  talos: patch\n"
         "  ignore: [1.12.2]\n"
         "  minimumReleaseAge: 4s\n";
}

// Merges `branch` into main on the server, as the forge's merge button would.
void MergeOnServer(E2eWorld& world, const std::string& branch) {
  const std::string work = (world.dir() / "merge-work").string();
  gitsource::testing::MustRun({"git", "clone", "-q", world.repo().bare().string(), work});
  gitsource::testing::MustRun({"git", "-C", work, "-c", "user.name=Reviewer", "-c",
                               "user.email=reviewer@example.com", "merge", "-q", "--no-ff",
                               "origin/" + branch, "-m", "Merge " + branch});
  gitsource::testing::MustRun({"git", "-C", work, "push", "-q", "origin", "HEAD:main"});
}

TEST_F(E2eTest, ReleaseProposalsOpenOnePullRequestPerChainAndItsMergeRollsOut) {
  FakeForge forge("github", "acme/fleet", kProposalToken);
  E2E_ASSERT_OK(world().StartFleet(
      {MakeCluster("lab", 1, 0, "1.12.0"), MakeCluster("staging", 1, 0, "1.12.0"),
       MakeCluster("prod", 1, 1, "1.12.0"), MakeCluster("old", 1, 0, "1.11.6")}));
  ProfileDef staging = AtTalos("1.12.0");
  staging.spec_lines = {"promotion: {after: [lab]}"};
  ProfileDef prod = AtTalos("1.12.0");
  prod.spec_lines = {"promotion: {after: [staging]}"};
  ProfileDef old = AtTalos("1.11.6");
  old.spec_lines = {"updates: {talos: minor, ignore: [], minimumReleaseAge: 0s}"};
  world().PushProfiles(
      {{"lab", AtTalos("1.12.0")}, {"staging", staging}, {"prod", prod}, {"old", old}},
      "initial profiles", {{"reconciler.yaml", ChainDefaults()}});
  std::ofstream(world().dir() / "forge-token") << kProposalToken << "\n";
  const std::string factory = world().sim().factory_url();
  E2E_ASSERT_OK(world().StartDaemon([&](DaemonOptions& o) {
    o.extra_args = {"--image-factory",
                    factory,
                    "--image-factory-ttl",
                    "1s",
                    "--propose-interval",
                    "1s",
                    "--forge",
                    "github",
                    "--forge-api-url",
                    forge.api_url(),
                    "--forge-allow-insecure-http",
                    "--forge-token-file",
                    (world().dir() / "forge-token").string(),
                    "--forge-repository",
                    "acme/fleet"};
  }));
  for (const char* cluster : {"lab", "staging", "prod"}) {
    E2E_ASSERT_OK(world().WaitForReady(cluster, "1.12.0", "", kProposalTimeout).status());
  }
  E2E_ASSERT_OK(world().WaitForReady("old", "1.11.6", "", kProposalTimeout).status());

  // Two minors behind the catalog's 1.13.9: the first hop only, 1.12.0.
  ASSERT_TRUE(forge.WaitFor(kProposalTimeout, [&] { return OpenFor(forge, kOldBranch, "1.12.0"); }))
      << world().Diagnostics();

  // 1.12.2 is ignored by the chain: "old" (which ignores nothing) moves to it, the chain never.
  E2E_ASSERT_OK(world().sim().AddFactoryRelease("v1.12.2"));
  ASSERT_TRUE(forge.WaitFor(kProposalTimeout, [&] { return OpenFor(forge, kOldBranch, "1.12.2"); }))
      << world().Diagnostics();
  EXPECT_TRUE(PullsOf(forge, kLabBranch).empty());
  EXPECT_EQ(gitsource::testing::MustRun({"git", "--git-dir", world().repo().bare().string(),
                                         "for-each-ref", std::string("refs/heads/") + kLabBranch}),
            "");

  // 1.12.3 waits for its 4 s of age, then becomes the chain's one pull request. The daemon
  // cannot know the release before it is added, so the pull request opens 4 s after that at
  // the earliest (the forge stamps it with the same clock).
  const Env::TimePoint added = Env::Default().Now();
  E2E_ASSERT_OK(world().sim().AddFactoryRelease("v1.12.3"));
  ASSERT_TRUE(forge.WaitFor(kProposalTimeout, [&] { return OpenFor(forge, kOldBranch, "1.12.3"); }))
      << world().Diagnostics();
  ASSERT_TRUE(forge.WaitFor(kProposalTimeout, [&] { return OpenFor(forge, kLabBranch, "1.12.3"); }))
      << world().Diagnostics();
  EXPECT_THAT(world().daemon().log(), HasSubstr("1.12.3 not proposed yet"));
  FakePull first = PullsOf(forge, kLabBranch).back();
  // GitHub labels a pull request in a call after the one that opens it: read it once the daemon
  // has logged both done.
  ASSERT_TRUE(world().WaitUntil(kProposalTimeout, [&] {
    return world().daemon().log().find(fmt::format("pull={} result=opened", first.number)) !=
           std::string::npos;
  })) << world().Diagnostics();
  first = PullsOf(forge, kLabBranch).back();
  EXPECT_GE(first.opened - added, std::chrono::seconds(4)) << "proposed before minimumReleaseAge";
  EXPECT_EQ(first.title, "Upgrade lab, staging, prod to Talos 1.12.3");
  EXPECT_EQ(first.base, "main");
  EXPECT_THAT(first.labels, testing::ElementsAre("talos-reconciler"));
  EXPECT_THAT(first.body, HasSubstr("talos-reconciler:proposal group=lab talos=1.12.3"));
  EXPECT_THAT(first.body, HasSubstr("| prod | `clusters/prod.yaml` | 1.12.0 → 1.12.3 |"));
  EXPECT_THAT(first.body, HasSubstr("Talos 1.12.0 → 1.12.3"));  // the plan of each cluster
  const std::string proposed_prod =
      gitsource::testing::MustRun({"git", "--git-dir", world().repo().bare().string(), "show",
                                   std::string(kLabBranch) + ":clusters/prod.yaml"});
  EXPECT_THAT(proposed_prod, HasSubstr("version: 1.12.3"));
  EXPECT_THAT(proposed_prod, HasSubstr("promotion: {after: [staging]}"));
  // Each cluster's status names the proposal that concerns it.
  E2E_ASSERT_OK(world()
                    .WaitForStatus(
                        "prod",
                        [&](const core::ClusterStatus& s) {
                          return s.proposal && s.proposal->branch == kLabBranch &&
                                 s.proposal->talos == "1.12.3" &&
                                 s.proposal->pull_request == first.number;
                        },
                        kProposalTimeout)
                    .status());

  // A newer release updates the same pull request; none is added.
  E2E_ASSERT_OK(world().sim().AddFactoryRelease("v1.12.4"));
  ASSERT_TRUE(forge.WaitFor(kProposalTimeout, [&] { return OpenFor(forge, kLabBranch, "1.12.4"); }))
      << world().Diagnostics();
  ASSERT_EQ(PullsOf(forge, kLabBranch).size(), 1u);
  EXPECT_GE(PullsOf(forge, kLabBranch).back().edits, 1);

  // Closed without merge: 1.12.4 is not proposed again.
  forge.ClosePull(first.number);
  ASSERT_TRUE(world().WaitUntil(kProposalTimeout, [&] {
    return world().daemon().log().find(fmt::format("pull={} reason=", first.number)) !=
           std::string::npos;
  })) << world().Diagnostics();
  ASSERT_TRUE(world().WaitUntil(kProposalTimeout, [&] {
    const std::string log = world().daemon().log();
    size_t count = 0;
    for (size_t at = log.find("result=declined"); at != std::string::npos;
         at = log.find("result=declined", at + 1)) {
      ++count;
    }
    return count >= 3;  // three passes declined it
  }));
  ASSERT_EQ(PullsOf(forge, kLabBranch).size(), 1u);
  EXPECT_EQ(PullsOf(forge, kLabBranch).back().state, "closed");

  // A newer release is proposed afresh; its merge rolls lab out, promotion carries the rest.
  E2E_ASSERT_OK(world().sim().AddFactoryRelease("v1.12.5"));
  ASSERT_TRUE(forge.WaitFor(kProposalTimeout, [&] { return OpenFor(forge, kLabBranch, "1.12.5"); }))
      << world().Diagnostics();
  ASSERT_EQ(PullsOf(forge, kLabBranch).size(), 2u);
  // The forge knows of the merge before the daemon reads it from the watched branch (here:
  // before it is pushed): the merged proposal is not opened again meanwhile.
  const int64_t merged = PullsOf(forge, kLabBranch).back().number;
  forge.MarkPullMerged(merged);
  ASSERT_TRUE(world().WaitUntil(kProposalTimeout, [&] {
    return world().daemon().log().find(fmt::format("result=merged pull={}", merged)) !=
           std::string::npos;
  })) << world().Diagnostics();
  MergeOnServer(world(), kLabBranch);
  for (const char* cluster : {"lab", "staging", "prod"}) {
    E2E_ASSERT_OK(world().WaitForReady(cluster, "1.12.5", "", kProposalTimeout).status());
  }
  E2E_ASSERT_OK(
      world()
          .WaitForStatus(
              "prod", [](const core::ClusterStatus& s) { return !s.proposal; }, kProposalTimeout)
          .status());
  EXPECT_EQ(PullsOf(forge, kLabBranch).size(), 2u);
  EXPECT_TRUE(OpenFor(forge, kOldBranch, "1.12.5"));
  EXPECT_EQ(PullsOf(forge, kOldBranch).size(), 1u);
  ASSERT_TRUE(world().WaitUntil(kProposalTimeout, [&] {
    absl::StatusOr<HttpReply> metrics = world().daemon().Get("/metrics");
    return metrics.ok() &&
           metrics->body.find("talos_reconciler_proposals{state=\"merged\"} 1") !=
               std::string::npos &&
           metrics->body.find("talos_reconciler_proposals{state=\"open\"} 1") != std::string::npos;
  })) << world().Diagnostics();
  EXPECT_THAT(world().daemon().log(), Not(HasSubstr(kProposalToken)));
  EXPECT_THAT(forge.Violations(), testing::IsEmpty());
}

}  // namespace
}  // namespace tr::e2e
