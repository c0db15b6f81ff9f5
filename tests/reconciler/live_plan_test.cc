// `plan --credentials-dir`: the real observer against talos-sim over mutual TLS.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"
#include "reconciler/offline_commands.h"
#include "tests/sim/fleet.h"

namespace tr::reconciler {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(LivePlanTest, ObservesTheFleetAndPlansIt) {
  const fs::path dir = fs::temp_directory_path() / ("tr-live-plan-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "repo/clusters");
  absl::StatusOr<sim::FleetSpec> spec = sim::FleetSpec::Parse(R"(
time_scale: 0.001
address_prefix: auto
clusters:
  - name: live
    nodes:
      - {name: live-cp, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: live-w0, role: worker, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: live-w1, role: worker, talos: v1.12.0, kubernetes: 1.34.1}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<std::unique_ptr<sim::Fleet>> fleet = sim::Fleet::Start(*spec, dir / "sim");
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  const std::string cp = *(*fleet)->NodeAddress("live-cp");
  std::ofstream(dir / "repo/clusters/live.yaml") << R"(apiVersion: talos-reconciler.dev/v1alpha1
kind: ClusterProfile
metadata: {name: live}
spec:
  endpoints: [)" << cp << R"(]
  credentials: live
  talos: {version: 1.12.0, image: factory.talos.dev/metal-installer/abc}
  kubernetes: {version: 1.34.1}
  nodes:
    - {name: live-cp, address: )" << cp << R"(, role: controlplane}
    - {name: live-w0, address: )" << *(*fleet)->NodeAddress("live-w0")
                                                 << R"(, role: worker}
    - {name: live-w1, address: )" << *(*fleet)->NodeAddress("live-w1")
                                                 << R"(, role: worker}
)";
  std::ostringstream out, err;
  PlanOptions options{dir / "repo", {}, PlanFormat::kJson, dir / "sim", "live-w0", {}};
  EXPECT_EQ(RunPlan(options, out, err), kExitOk) << err.str() << out.str();
  nlohmann::json j = nlohmann::json::parse(out.str());
  const auto& cluster = j["clusters"][0];
  EXPECT_EQ(cluster["status"], "planned");
  EXPECT_EQ(cluster["current"]["talos"], "1.11.6");
  EXPECT_EQ(cluster["current"]["kubernetes"], "1.34.1");
  // live-w1 already runs 1.12.0; the own node live-w0 goes last among the workers anyway.
  EXPECT_EQ(cluster["steps"][0]["nodes"], nlohmann::json::array({"live-w0", "live-cp"}));
  (*fleet)->Stop();
  fs::remove_all(dir);
}

// A pull request's profiles: planned against the fleet observed through the trusted profile,
// so the proposal's endpoints (here an address nothing listens on) are never dialled.
TEST(LivePlanTest, PreviewObservesThroughTheTrustedProfileOnly) {
  const fs::path dir = fs::temp_directory_path() / ("tr-preview-plan-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  absl::StatusOr<sim::FleetSpec> spec = sim::FleetSpec::Parse(R"(
time_scale: 0.001
address_prefix: auto
clusters:
  - name: prev
    nodes:
      - {name: prev-cp, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
)");
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<std::unique_ptr<sim::Fleet>> fleet = sim::Fleet::Start(*spec, dir / "sim");
  ASSERT_TRUE(fleet.ok()) << fleet.status();
  auto profile = [](const std::string& address, const std::string& talos) {
    return "apiVersion: talos-reconciler.dev/v1alpha1\nkind: ClusterProfile\nmetadata: {name: prev}\n"
           "spec:\n  endpoints: [" + address + "]\n  credentials: prev\n"
           "  talos: {version: " + talos + ", image: factory.talos.dev/metal-installer/abc}\n"
           "  kubernetes: {version: 1.34.1}\n  nodes:\n"
           "    - {name: prev-cp, address: " + address + ", role: controlplane}\n";
  };
  const std::string cp = *(*fleet)->NodeAddress("prev-cp");
  const std::vector<core::SourceFile> trusted{{"clusters/prev.yaml", profile(cp, "1.11.6")}};
  PlanPreview same = PreviewPlan(trusted, trusted, dir / "sim", "");
  EXPECT_TRUE(same.changed.empty());
  EXPECT_TRUE(same.markdown.empty());

  const std::vector<core::SourceFile> proposed{
      {"clusters/prev.yaml", profile("127.0.0.99", "1.12.0")}};
  PlanPreview preview = PreviewPlan(proposed, trusted, dir / "sim", "");
  EXPECT_EQ(preview.changed, std::vector<std::string>{"prev"});
  EXPECT_TRUE(preview.unobserved.empty()) << testing::PrintToString(preview.unobserved);
  EXPECT_EQ(preview.exit_code, kExitOk) << preview.markdown;
  EXPECT_THAT(preview.markdown, HasSubstr("1.12.0"));

  const std::vector<core::SourceFile> invalid{{"clusters/prev.yaml", "spec: [unclosed"}};
  PlanPreview broken = PreviewPlan(invalid, trusted, dir / "sim", "");
  EXPECT_EQ(broken.exit_code, kExitInvalid);
  EXPECT_THAT(broken.markdown, HasSubstr("clusters/prev.yaml"));
  (*fleet)->Stop();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tr::reconciler
