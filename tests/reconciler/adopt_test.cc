// `adopt` against talos-sim over mutual TLS: the profile it writes from a running 5-node
// cluster validates and plans as up to date (the done-when of issue 47), it takes the
// credentials talosctl would (--talosconfig, $TALOSCONFIG, ~/.talos/config, --context), and it
// names the nodes when they do not agree.
#include "reconciler/app/adopt_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "reconciler/app/offline_commands.h"
#include "reconciler/features/plan/plan_engine.h"
#include "reconciler/operations/adoption.h"
#include "tests/reconciler/sim_fleet_fixture.h"
#include "tests/sim/catalog/schematic_id.h"

namespace tr::reconciler {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kFiveNodes[] = R"(
time_scale: 0.001
address_prefix: auto
clusters:
  - name: prod
    nodes:
      - {name: prod-cp-0, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: prod-cp-1, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: prod-cp-2, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: prod-w-0, role: worker, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: prod-w-1, role: worker, talos: v1.11.6, kubernetes: 1.34.1}
  - name: edge
    nodes:
      - {name: edge-0, role: controlplane, talos: v1.13.9, kubernetes: 1.35.4,
         schematic: ee21ef4a5ef808a9b7484cc0dda0f25075021691c8c09a276591eedb638ea1f9}
)";

class AdoptTest : public SimFleetFixture {
 protected:
  AdoptTest() : SimFleetFixture("tr-adopt") {}
  void TearDown() override {
    SimFleetFixture::TearDown();
    ::unsetenv("TALOSCONFIG");
  }
  // adopt's exit code; its stdout in `out_`, its stderr in `err_`.
  int Adopt(const AdoptOptions& options) {
    std::ostringstream out, err;
    const int code = RunAdopt(options, out, err);
    out_ = out.str();
    err_ = err.str();
    return code;
  }

  std::string out_, err_;
};

TEST_F(AdoptTest, AFiveNodeClustersProfileValidatesAndPlansNothing) {
  StartFleet(kFiveNodes);
  if (HasFatalFailure()) return;
  const fs::path talosconfig = dir_ / "sim/prod/talosconfig";
  ASSERT_EQ(Adopt({"", talosconfig, "", ""}), 0) << err_;
  EXPECT_THAT(out_, HasSubstr("name: prod\n"));
  EXPECT_THAT(out_, HasSubstr("credentials: prod\n"));
  EXPECT_THAT(out_, HasSubstr("version: 1.11.6\n"));
  EXPECT_THAT(out_, HasSubstr("version: 1.34.1\n"));
  EXPECT_THAT(out_, HasSubstr("image: ghcr.io/siderolabs/installer\n"));
  EXPECT_THAT(out_, HasSubstr(fmt::format("{{name: prod-w-1, address: {}, role: worker}}",
                                          *fleet_->NodeAddress("prod-w-1"))));
  std::ofstream(dir_ / "repo/clusters/prod.yaml") << out_;

  std::ostringstream vout, verr;
  EXPECT_EQ(RunValidate({dir_ / "repo", ValidateFormat::kText, 0}, vout, verr), kExitOk)
      << vout.str() << verr.str();
  PlanOptions plan;
  plan.dir = dir_ / "repo";
  plan.format = PlanFormat::kJson;
  plan.talosconfig = talosconfig;
  std::ostringstream pout, perr;
  ASSERT_EQ(RunPlan(plan, Env::Default(), pout, perr), kExitOk) << perr.str() << pout.str();
  const nlohmann::json report = nlohmann::json::parse(pout.str());
  EXPECT_EQ(report["clusters"][0]["plan"], "up-to-date") << pout.str();
}

TEST_F(AdoptTest, AFactoryNodeKeepsItsSchematicAndShowsItsExtensions) {
  StartFleet(kFiveNodes);
  if (HasFatalFailure()) return;
  ASSERT_EQ(Adopt({"edge-lab", dir_ / "sim/edge/talosconfig", "edge", ""}), 0) << err_;
  EXPECT_THAT(out_, HasSubstr("name: edge-lab\n"));
  EXPECT_THAT(out_, HasSubstr("credentials: edge\n"));
  EXPECT_THAT(out_, HasSubstr(
                        "installer/"
                        "ee21ef4a5ef808a9b7484cc0dda0f25075021691c8c09a276591eedb638ea1f9\n"));
  EXPECT_THAT(out_, HasSubstr("schematic ee21ef4a5ef808a9b7484cc0dda0f25075021691c8c09a276591eedb638ea1f9"));
  std::ofstream(dir_ / "repo/clusters/edge-lab.yaml") << out_;
  std::ostringstream vout, verr;
  EXPECT_EQ(RunValidate({dir_ / "repo", ValidateFormat::kText, 0}, vout, verr), kExitOk)
      << vout.str() << verr.str() << out_;
}

// Nodes that booted a factory schematic of official extensions: the profile declares that
// schematic when its ID (as talos-sim's factory computes it, upstream's way) is the one the
// nodes booted; a schematic with more than extensions keeps the installer's name.
TEST(ProvenSchematicTest, DeclaredOnlyWhenTheExtensionsMakeTheBootedId) {
  const auto booted = [](const std::string& schematic_yaml) {
    absl::StatusOr<sim::Schematic> parsed = sim::ParseSchematic(schematic_yaml);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    const std::string id = sim::SchematicId(*parsed);
    std::vector<core::AdoptedNode> nodes(2);
    for (core::AdoptedNode& node : nodes) {
      node.install_image = "factory.talos.dev/metal-installer/" + id + ":v1.13.9";
      node.seen.schematic = id;
      node.seen.extensions = {"iscsi-tools v0.2.0", "util-linux-tools 2.41.1"};
    }
    return nodes;
  };
  const std::optional<core::FactoryInstaller> proven = ProvenSchematic(booted(
      "customization:\n  systemExtensions:\n    officialExtensions:\n"
      "      - siderolabs/iscsi-tools\n      - siderolabs/util-linux-tools\n"));
  ASSERT_TRUE(proven.has_value());
  EXPECT_EQ(proven->factory, "https://factory.talos.dev");
  EXPECT_EQ(proven->platform, "metal");
  EXPECT_EQ(proven->schematic.official_extensions,
            (std::vector<std::string>{"siderolabs/iscsi-tools", "siderolabs/util-linux-tools"}));
  EXPECT_FALSE(ProvenSchematic(booted(
                                   "customization:\n  extraKernelArgs: [net.ifnames=0]\n"
                                   "  systemExtensions:\n    officialExtensions:\n"
                                   "      - siderolabs/iscsi-tools\n"
                                   "      - siderolabs/util-linux-tools\n"))
                   .has_value());
}

TEST_F(AdoptTest, TakesTheTalosconfigAsTalosctlDoes) {
  StartFleet(kFiveNodes);
  if (HasFatalFailure()) return;
  ::setenv("TALOSCONFIG", (dir_ / "sim/prod/talosconfig").c_str(), 1);
  ASSERT_EQ(Adopt({}), 0) << err_;
  EXPECT_THAT(out_, HasSubstr("name: prod\n"));
  // A context the file does not have is named.
  EXPECT_EQ(Adopt({"", {}, "nope", ""}), 1);
  EXPECT_THAT(err_, HasSubstr("nope"));
  // Without $TALOSCONFIG, ~/.talos/config.
  ::unsetenv("TALOSCONFIG");
  const char* home = std::getenv("HOME");
  const std::string saved = home ? home : "";
  fs::create_directories(dir_ / "home/.talos");
  fs::copy_file(dir_ / "sim/prod/talosconfig", dir_ / "home/.talos/config");
  ::setenv("HOME", (dir_ / "home").c_str(), 1);
  const int code = Adopt({});
  ::setenv("HOME", saved.c_str(), 1);
  ASSERT_EQ(code, 0) << err_;
  EXPECT_THAT(out_, HasSubstr("credentials: prod\n"));
}

TEST_F(AdoptTest, NodesOnTwoVersionsAreNamed) {
  StartFleet(R"(
time_scale: 0.001
address_prefix: auto
clusters:
  - name: mixed
    nodes:
      - {name: mixed-cp, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: mixed-w, role: worker, talos: v1.12.0, kubernetes: 1.34.1}
)");
  if (HasFatalFailure()) return;
  EXPECT_EQ(Adopt({"", dir_ / "sim/mixed/talosconfig", "", ""}), 1);
  EXPECT_THAT(err_, HasSubstr("1.12.0 (mixed-w)"));
  EXPECT_EQ(out_, "");
}

}  // namespace
}  // namespace tr::reconciler
