// `plan` and the pull request plan with an Image Factory: a schematic profile is resolved at the
// simulated factory on 127.0.0.1 before it is planned, a factory that fails blocks it naming
// the factory, and a pull request's plan asks the watched branch's factory, never its own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/env.h"
#include "core/schematic.h"
#include "core/status_yaml.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "reconciler/clients/factory/broken_releases.h"
#include "reconciler/clients/factory/factory_installers.h"
#include "reconciler/clients/factory/image_factory.h"
#include "reconciler/features/plan/plan_engine.h"
#include "tests/reconciler/sim_fleet_fixture.h"
#include "tests/sim/catalog/image_factory_server.h"
#include "tests/sim/common/scheduler.h"
#include "tests/support/blackhole.h"
#include "tests/support/fleet_fixtures.h"
#include "tests/support/loopback_http.h"

namespace tr::reconciler {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kObservedEdge[] = R"(clusters:
  edge:
    nodes:
      edge-cp: {talos: 1.11.6, kubelet: 1.34.1, ready: true, etcdMember: true, etcdLeader: true}
)";

// The profile of cluster `name` asking for Talos 1.12.0 with a schematic of `extensions`, at
// `factory` (empty: none named).
std::string SchematicProfile(const std::string& name, const std::string& extensions,
                             const std::string& factory) {
  std::string text = "apiVersion: talos-reconciler.dev/v1alpha1\nkind: ClusterProfile\n";
  text += "metadata: {name: " + name +
          "}\nspec:\n  endpoints: [127.20.9.1]\n  credentials: " + name +
          "\n  talos:\n    version: 1.12.0\n";
  text += "    schematic: {customization: {systemExtensions: {officialExtensions: [" + extensions +
          "]}}}\n";
  if (!factory.empty()) text += "    factory: " + factory + "\n";
  text += "  kubernetes: {version: 1.35.0}\n  nodes:\n";
  text += "    - {name: " + name + "-cp, address: 127.20.9.1, role: controlplane}\n";
  return text;
}

// A checkout of its own with an observed-state file, and the simulated factory: it builds
// Talos 1.12.0 and 1.13.0, with iscsi-tools and qemu-guest-agent for both and drbd for 1.13.0
// only.
class PlanFactoryTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = PerTestDir("tr-plan-factory");
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "clusters");
    std::ofstream(dir_ / "observed.yaml") << kObservedEdge;
    sim::FactorySpec spec;
    spec.versions = {"v1.12.0", "v1.13.0"};
    spec.extensions = {{"siderolabs/iscsi-tools", {}},
                       {"siderolabs/qemu-guest-agent", {}},
                       {"siderolabs/drbd", {"v1.13.0"}}};
    auto catalogue = std::make_shared<sim::ImageFactory>(spec, std::vector<std::string>{},
                                                         std::set<std::string>{});
    auto server = sim::ImageFactoryServer::Start(catalogue, scheduler_, 1.0);
    ASSERT_TRUE(server.ok()) << server.status();
    factory_ = *std::move(server);
  }
  void TearDown() override {
    if (factory_) factory_->Stop();
    scheduler_->Stop();
    fs::remove_all(dir_);
  }

  void WriteProfile(const std::string& extensions, const std::string& factory = "") {
    std::ofstream(dir_ / "clusters/edge.yaml") << SchematicProfile("edge", extensions, factory);
  }
  // `plan --observed` with `--image-factory` set to `image_factory`.
  int Plan(const std::string& image_factory, PlanFormat format = PlanFormat::kText) {
    PlanOptions options;
    options.dir = dir_;
    options.observed_file = dir_ / "observed.yaml";
    options.format = format;
    options.image_factory.origin = image_factory;
    options.image_factory.timeout = std::chrono::seconds(30);
    out_.str("");
    err_.str("");
    return RunPlan(options, Env::Default(), out_, err_);
  }
  // The ID the factory gives the schematic of `extensions`, asked directly.
  std::string IdOf(std::vector<std::string> extensions) {
    core::Schematic schematic;
    schematic.official_extensions = std::move(extensions);
    absl::StatusOr<std::string> id = factory::CreateSchematic(
        {.origin = factory_->url(), .ca_file = {}}, core::SchematicYaml(schematic));
    EXPECT_TRUE(id.ok()) << id.status();
    return id.value_or("");
  }

  fs::path dir_;
  std::shared_ptr<sim::ManualScheduler> scheduler_ = std::make_shared<sim::ManualScheduler>();
  std::unique_ptr<sim::ImageFactoryServer> factory_;
  std::ostringstream out_, err_;
};

TEST_F(PlanFactoryTest, ResolvesTheSchematicAndShowsItsInstallerAndExtensions) {
  WriteProfile("siderolabs/qemu-guest-agent, siderolabs/iscsi-tools");
  ASSERT_EQ(Plan(factory_->url()), kExitOk) << err_.str() << out_.str();
  const std::string id = IdOf({"siderolabs/iscsi-tools", "siderolabs/qemu-guest-agent"});
  EXPECT_THAT(out_.str(), HasSubstr("edge: planned\n"));
  EXPECT_THAT(out_.str(), HasSubstr("\n  schematic: " + id +
                                    " (siderolabs/iscsi-tools, siderolabs/qemu-guest-agent)\n"));
  EXPECT_THAT(out_.str(), HasSubstr("image: " + factory_->factory().host() + "/metal-installer/" +
                                    id + ":v1.12.0"));

  ASSERT_EQ(Plan(factory_->url(), PlanFormat::kMarkdown), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("Schematic: " + id + " (siderolabs/iscsi-tools, "));

  ASSERT_EQ(Plan(factory_->url(), PlanFormat::kJson), kExitOk) << err_.str();
  const nlohmann::json cluster = nlohmann::json::parse(out_.str())["clusters"][0];
  EXPECT_EQ(cluster["schematic"]["id"], id);
  EXPECT_EQ(cluster["schematic"]["extensions"],
            nlohmann::json::array({"siderolabs/iscsi-tools", "siderolabs/qemu-guest-agent"}));
}

TEST_F(PlanFactoryTest, TheProfilesOwnFactoryIsAskedBeforeTheFlags) {
  test_support::Blackhole elsewhere("127.0.0.1");
  ASSERT_TRUE(elsewhere.ok());
  WriteProfile("siderolabs/iscsi-tools", factory_->url());
  EXPECT_EQ(Plan("http://127.0.0.1:" + std::to_string(elsewhere.port())), kExitOk)
      << err_.str() << out_.str();
  EXPECT_THAT(out_.str(), HasSubstr("schematic: " + IdOf({"siderolabs/iscsi-tools"})));
  EXPECT_EQ(elsewhere.accepted(), 0);
}

TEST_F(PlanFactoryTest, AFactoryAnswering500BlocksTheClusterNamingIt) {
  WriteProfile("siderolabs/iscsi-tools");
  factory_->set_faults({.internal_error = true});
  EXPECT_EQ(Plan(factory_->url()), kExitBlocked) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("edge: blocked\n"));
  EXPECT_THAT(out_.str(), HasSubstr("the Image Factory " + factory_->url()));
  EXPECT_THAT(out_.str(), HasSubstr("schematic: ID not known (siderolabs/iscsi-tools)"));
  EXPECT_THAT(out_.str(), Not(HasSubstr("image: ")));
}

TEST_F(PlanFactoryTest, AnExtensionMissingForTheTargetBlocksTheClusterNamingItAndTheVersion) {
  WriteProfile("siderolabs/drbd, siderolabs/iscsi-tools");
  EXPECT_EQ(Plan(factory_->url()), kExitBlocked) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("edge: blocked\n"));
  EXPECT_THAT(out_.str(), HasSubstr("the Image Factory " + factory_->url() +
                                    " has no extension siderolabs/drbd for Talos 1.12.0"));
}

// With the status branch saying a node is in flight, plan --status skips the extension check
// as the daemon does (it follows that node whatever the factory says); without it, it blocks.
TEST_F(PlanFactoryTest, ANodeInFlightSkipsTheExtensionCheckAsTheDaemonDoes) {
  WriteProfile("siderolabs/drbd");
  EXPECT_EQ(Plan(factory_->url()), kExitBlocked) << err_.str();
  core::ClusterStatus upgrading;
  upgrading.cluster = "edge";
  upgrading.phase = core::ClusterPhase::kUpgradingTalos;
  upgrading.rollout =
      core::testing_fixtures::NodeInFlight("edge-cp", "1.12.0", Env::Default().Now());
  fs::create_directories(dir_ / "branch/status");
  std::ofstream(dir_ / "branch" / core::ClusterStatusPath("edge"))
      << core::RenderStatusYaml(upgrading);
  PlanOptions options;
  options.dir = dir_;
  options.observed_file = dir_ / "observed.yaml";
  options.status_dir = dir_ / "branch";
  options.image_factory.origin = factory_->url();
  options.image_factory.timeout = std::chrono::seconds(30);
  out_.str("");
  EXPECT_EQ(RunPlan(options, Env::Default(), out_, err_), kExitOk) << err_.str() << out_.str();
  EXPECT_THAT(out_.str(), Not(HasSubstr("has no extension")));
  EXPECT_THAT(out_.str(), HasSubstr("schematic: " + IdOf({"siderolabs/drbd"})));
}

// The factory marks the target broken (it leaves /versions, /versions?broken=true lists it):
// the plan is blocked naming the release, not what the factory no longer lists for it.
TEST_F(PlanFactoryTest, ABrokenTargetBlocksThePlanNamingTheRelease) {
  WriteProfile("siderolabs/iscsi-tools");
  ASSERT_EQ(Plan(factory_->url()), kExitOk) << err_.str() << out_.str();
  factory_->factory().MarkBroken("v1.12.0");
  EXPECT_EQ(Plan(factory_->url()), kExitBlocked) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("edge: blocked\n"));
  EXPECT_THAT(out_.str(), HasSubstr("Talos 1.12.0 is marked broken by the Image Factory"));
  EXPECT_EQ(err_.str().find("warning"), std::string::npos) << err_.str();
}

// A factory from before the broken list ignores the query and answers its release list: a
// release it lists is not broken. One that cannot be asked is named, and nothing is marked.
TEST(BrokenReleasesTest, AReleaseTheFactoryStillListsIsNotBrokenAndAFailureIsNamed) {
  auto server = std::make_unique<httplib::Server>();
  server->Get("/versions", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"(["v1.12.0", "v1.13.0"])", "application/json");
  });
  test_support::LoopbackServer old_factory(std::move(server));
  const std::string origin = "http://127.0.0.1:" + std::to_string(old_factory.port());
  core::ReleaseCatalog catalog;
  EXPECT_THAT(
      factory::MarkBrokenReleases({.origin = {}, .ca_file = {}}, {origin}, catalog, Env::Default()),
      testing::IsEmpty());
  EXPECT_THAT(catalog.BrokenTalos(), testing::IsEmpty());

  test_support::Blackhole nobody("127.0.0.1");
  ASSERT_TRUE(nobody.ok());
  const std::string silent = "http://127.0.0.1:" + std::to_string(nobody.port());
  factory::ImageFactoryOptions options{.origin = {}, .ca_file = {}};
  options.timeout = std::chrono::milliseconds(200);
  const std::vector<std::string> errors =
      factory::MarkBrokenReleases(options, {silent}, catalog, Env::Default());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("the Image Factory " + silent));
  EXPECT_THAT(catalog.BrokenTalos(), testing::IsEmpty());
}

TEST_F(PlanFactoryTest, WithoutAFactoryThePlanSaysToPassOne) {
  WriteProfile("siderolabs/iscsi-tools");
  EXPECT_EQ(Plan(""), kExitBlocked) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("edge: blocked\n"));
  EXPECT_THAT(out_.str(), HasSubstr("spec.talos.schematic needs an Image Factory"));
  EXPECT_THAT(out_.str(), HasSubstr("pass --image-factory URL"));
}

// A pull request that points its profiles at another factory (a listener that counts the
// connections it gets) is planned with the watched branch's factory all the same: the
// profile's for a cluster the branch has, reconciler.yaml's for a new one.
TEST_F(PlanFactoryTest, APullRequestIsResolvedAtTheWatchedBranchsFactoryNeverItsOwn) {
  test_support::Blackhole theirs("127.0.0.1");
  ASSERT_TRUE(theirs.ok());
  const std::string their_url = "http://127.0.0.1:" + std::to_string(theirs.port());
  const std::vector<core::SourceFile> trusted{
      {"reconciler.yaml",
       "apiVersion: talos-reconciler.dev/v1alpha1\nkind: RepositoryDefaults\nimageFactory: " +
           factory_->url() + "\n"},
      {"clusters/edge.yaml", SchematicProfile("edge", "siderolabs/iscsi-tools", factory_->url())}};
  std::vector<core::SourceFile> proposed = trusted;
  proposed[1].content =
      SchematicProfile("edge", "siderolabs/iscsi-tools, siderolabs/qemu-guest-agent", their_url);
  proposed.push_back(
      {"clusters/fresh.yaml", SchematicProfile("fresh", "siderolabs/qemu-guest-agent", their_url)});
  // The daemon's resolver, without --image-factory; its timeout short, should it dial theirs.
  factory::FactoryInstallers installers(
      {.origin = "", .ca_file = {}, .timeout = std::chrono::milliseconds(500)}, "",
      "with the daemon's --image-factory");

  const PlanPreview preview = PreviewPlan(proposed, trusted, {dir_ / "no-credentials", {}}, "",
                                          Env::Default(), true, 0, &installers);
  EXPECT_EQ(preview.changed, (std::vector<std::string>{"edge", "fresh"}));
  EXPECT_THAT(preview.markdown,
              HasSubstr("Schematic: " +
                        IdOf({"siderolabs/iscsi-tools", "siderolabs/qemu-guest-agent"}) + " ("));
  EXPECT_THAT(preview.markdown,
              HasSubstr("Schematic: " + IdOf({"siderolabs/qemu-guest-agent"}) + " ("));
  EXPECT_THAT(preview.markdown, Not(HasSubstr(their_url)));
  EXPECT_EQ(theirs.accepted(), 0);

  // Without a resolver the schematic is not known, and the plan says so.
  const PlanPreview unresolved =
      PreviewPlan(proposed, trusted, {dir_ / "no-credentials", {}}, "", Env::Default());
  EXPECT_THAT(unresolved.markdown, HasSubstr("Schematic: ID not known"));
  EXPECT_EQ(theirs.accepted(), 0);
}

// A pull request whose change needs more factory requests than a preview may make is refused
// whole, naming the budget, before any request: 65 nodes with a schematic each (and the
// cluster's own) would be 66 schematic IDs.
TEST_F(PlanFactoryTest, APullRequestOverTheFactoryBudgetIsRefusedBeforeAnyRequest) {
  test_support::Blackhole factory("127.0.0.1");
  ASSERT_TRUE(factory.ok());
  const std::string url = "http://127.0.0.1:" + std::to_string(factory.port());
  const std::vector<core::SourceFile> trusted{
      {"clusters/edge.yaml", SchematicProfile("edge", "siderolabs/iscsi-tools", url)}};
  std::string wide = SchematicProfile("edge", "", url);
  for (int i = 0; i < 65; ++i) {
    wide += fmt::format(
        "    - {{name: w-{0}, address: 127.20.10.{0}, role: worker, schematic: "
        "{{customization: {{meta: [{{key: 10, value: \"n{0}\"}}]}}}}}}\n",
        i + 1);
  }
  factory::FactoryInstallers installers(
      {.origin = "", .ca_file = {}, .timeout = std::chrono::milliseconds(500)}, dir_ / "ids",
      "with the daemon's --image-factory");
  const PlanPreview preview =
      PreviewPlan({{"clusters/edge.yaml", wide}}, trusted, {dir_ / "no-credentials", {}}, "",
                  Env::Default(), true, 0, &installers);
  EXPECT_EQ(preview.refused.code(), absl::StatusCode::kResourceExhausted) << preview.refused;
  EXPECT_THAT(preview.markdown,
              HasSubstr("Not planned: the change needs 66 Image Factory requests (66 new "
                        "schematics, 0 extension lists); a pull request's plan makes at most 64"));
  EXPECT_EQ(preview.exit_code, kExitBlocked);
  EXPECT_EQ(factory.accepted(), 0);
  EXPECT_FALSE(fs::exists(dir_ / "ids"));
}

// Within the budget the preview asks the factory, and keeps what it answered for itself: the
// daemon's store of schematic IDs (its state directory) gets nothing from a pull request.
TEST_F(PlanFactoryTest, APullRequestsSchematicIdsAreNotKeptByTheDaemon) {
  const std::vector<core::SourceFile> trusted{
      {"clusters/edge.yaml", SchematicProfile("edge", "siderolabs/iscsi-tools", factory_->url())}};
  const std::vector<core::SourceFile> proposed{
      {"clusters/edge.yaml",
       SchematicProfile("edge", "siderolabs/qemu-guest-agent", factory_->url())}};
  factory::FactoryInstallers installers(
      {.origin = "", .ca_file = {}, .timeout = std::chrono::seconds(30)}, dir_ / "ids",
      "with the daemon's --image-factory");
  const PlanPreview preview = PreviewPlan(proposed, trusted, {dir_ / "no-credentials", {}}, "",
                                          Env::Default(), true, 0, &installers);
  ASSERT_TRUE(preview.refused.ok()) << preview.refused;
  EXPECT_THAT(preview.markdown,
              HasSubstr("Schematic: " + IdOf({"siderolabs/qemu-guest-agent"}) + " ("));
  core::Schematic schematic;
  schematic.official_extensions = {"siderolabs/qemu-guest-agent"};
  EXPECT_EQ(installers.ids().Known(factory_->url(), core::SchematicYaml(schematic)), std::nullopt);
  EXPECT_FALSE(fs::exists(dir_ / "ids"));
}

}  // namespace
}  // namespace tr::reconciler
