// examples/gitops: the Flux HelmRelease (with its GitRepository) and the Argo CD Application
// deploy the chart at the release tag of the current version, and their values render with the
// chart into a Deployment that mounts the existing Secrets they name (the chart makes none).
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/chart/helm_runner.h"
#include "yaml-cpp/yaml.h"

namespace tr::chart {
namespace {

const std::filesystem::path kExamples = std::filesystem::path(TR_SOURCE_DIR) / "examples/gitops";

YAML::Node OfKind(const std::string& file, const std::string& kind) {
  for (const YAML::Node& doc : YAML::LoadAllFromFile((kExamples / file).string())) {
    if (doc["kind"] && doc["kind"].as<std::string>() == kind) return doc;
  }
  ADD_FAILURE() << "no " << kind << " in " << file;
  return YAML::Node();
}

std::string ReleaseTag() {
  return "v" + YAML::LoadFile((ChartDir() / "Chart.yaml").string())["appVersion"].as<std::string>();
}

// Renders `values`; checks that the Secrets they name are mounted and none is made.
void ExpectDeploysWithExistingSecrets(HelmRunner& helm, const YAML::Node& values,
                                      const std::map<std::string, std::string>& mounted) {
  const Objects objects = helm.Template(YAML::Dump(values));
  ASSERT_TRUE(objects.contains("Deployment/r-talos-reconciler"));
  for (const auto& [key, object] : objects) {
    EXPECT_FALSE(key.starts_with("Secret/")) << key << ": the example's Secrets exist already";
  }
  const YAML::Node pod = objects.at("Deployment/r-talos-reconciler")["spec"]["template"]["spec"];
  const std::map<std::string, std::string> mounts = MountsOf(pod, pod["containers"][0]);
  for (const auto& [path, secret] : mounted) {
    ASSERT_TRUE(mounts.contains(path)) << path;
    EXPECT_EQ(mounts.at(path), secret) << path;
  }
  EXPECT_TRUE(objects.contains("PersistentVolumeClaim/r-talos-reconciler-state"));
}

TEST(GitOpsExamplesTest, FluxDeploysTheReleasedChartWithExistingSecrets) {
  const YAML::Node source = OfKind("flux.yaml", "GitRepository");
  const YAML::Node release = OfKind("flux.yaml", "HelmRelease");
  EXPECT_EQ(source["spec"]["ref"]["tag"].as<std::string>(), ReleaseTag());
  EXPECT_EQ(source["spec"]["url"].as<std::string>(),
            YAML::LoadFile((ChartDir() / "Chart.yaml").string())["home"].as<std::string>());
  EXPECT_EQ(release["spec"]["chart"]["spec"]["chart"].as<std::string>(), "charts/talos-reconciler");
  EXPECT_EQ(release["spec"]["chart"]["spec"]["sourceRef"]["name"].as<std::string>(),
            source["metadata"]["name"].as<std::string>());
  HelmRunner helm;
  ExpectDeploysWithExistingSecrets(helm, release["spec"]["values"],
                                   {{"/etc/talos-reconciler/git", "talos-reconciler-git"},
                                    {"/etc/talos-reconciler/talos/prod-eu-1", "talosconfig-prod-eu-1"},
                                    {"/etc/talos-reconciler/webhook", "talos-reconciler-webhook"},
                                    {"/etc/talos-reconciler/forge", "talos-reconciler-forge"}});
}

TEST(GitOpsExamplesTest, ArgoCdDeploysTheReleasedChartWithExistingSecrets) {
  const YAML::Node app = OfKind("argocd.yaml", "Application");
  EXPECT_EQ(app["spec"]["source"]["targetRevision"].as<std::string>(), ReleaseTag());
  EXPECT_EQ(app["spec"]["source"]["path"].as<std::string>(), "charts/talos-reconciler");
  HelmRunner helm;
  ExpectDeploysWithExistingSecrets(helm, app["spec"]["source"]["helm"]["valuesObject"],
                                   {{"/etc/talos-reconciler/git", "talos-reconciler-git"},
                                    {"/etc/talos-reconciler/talos/prod-eu-1", "talosconfig-prod-eu-1"},
                                    {"/etc/talos-reconciler/notify/oncall", "slack-oncall"}});
}

}  // namespace
}  // namespace tr::chart
