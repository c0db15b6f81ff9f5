// The chart's values as people use charts (issue 46): image tag from appVersion and a digest,
// extra environment and volumes, a PersistentVolumeClaim for the state directory, security
// contexts and probes as values (adapted to OpenShift's restricted-v2), an Ingress and an
// HTTPRoute for the webhook port; helm lint over a matrix of values, and the schema refusing
// typos in the new keys.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/chart/helm_runner.h"
#include "yaml-cpp/yaml.h"

namespace tr::chart {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

constexpr char kGit[] = "git: {repo: https://git.example.com/platform/clusters.git}\n";
constexpr char kWebhook[] = "webhook: {enabled: true, secret: 0123456789abcdef-secret}\n";
constexpr char kDeployment[] = "Deployment/r-talos-reconciler";

YAML::Node PodOf(const Objects& objects) {
  EXPECT_TRUE(objects.contains(kDeployment));
  return objects.at(kDeployment)["spec"]["template"]["spec"];
}

YAML::Node ChartYaml() { return YAML::LoadFile((ChartDir() / "Chart.yaml").string()); }

std::string ProjectVersion() {
  std::ifstream in(std::filesystem::path(TR_SOURCE_DIR) / "CMakeLists.txt");
  std::stringstream text;
  text << in.rdbuf();
  std::smatch match;
  const std::string s = text.str();
  EXPECT_TRUE(std::regex_search(s, match, std::regex(R"(project\([a-z_]+ VERSION ([0-9.]+))")));
  return match.size() > 1 ? match[1].str() : "";
}

class ChartValuesTest : public ::testing::Test {
 protected:
  // `helm template` with more arguments (--api-versions …); parsed, failing the test on an error.
  Objects TemplateWith(const std::string& values, const std::vector<std::string>& more) {
    std::vector<std::string> args = {"template", "r", ChartDir().string(), "-n", "talos-system",
                                     "-f", helm_.WriteValues(values).string()};
    args.insert(args.end(), more.begin(), more.end());
    const HelmResult r = helm_.Run(args);
    EXPECT_EQ(r.exit_code, 0) << values << r.err;
    return Parse(r.out);
  }
  void ExpectRefused(const std::string& values, const std::string& why) {
    const HelmResult r = helm_.TemplateResult(values);
    EXPECT_NE(r.exit_code, 0) << values;
    EXPECT_THAT(r.err, HasSubstr(why)) << values;
  }
  HelmRunner helm_;
};

// The matrix of the issue's "Done when": each set passes `helm lint --strict`.
TEST_F(ChartValuesTest, LintsTheValuesMatrix) {
  const std::vector<std::string> matrix = {
      std::string(kGit),
      std::string(kGit) + "persistence: {enabled: true, storageClassName: fast, size: 5Gi}\n",
      std::string(kGit) + "persistence: {enabled: true, existingClaim: mine}\n",
      std::string(kGit) +
          "extraEnv: [{name: HTTPS_PROXY, value: 'http://proxy:3128'}]\n"
          "envFrom: [{secretRef: {name: proxy}}]\n"
          "extraVolumes: [{name: ca, configMap: {name: corp-ca}}]\n"
          "extraVolumeMounts: [{name: ca, mountPath: /etc/ca, readOnly: true}]\n",
      std::string(kGit) + "openshift: {adaptSecurityContext: force}\n",
      std::string(kGit) + kWebhook + "ingress: {enabled: true, className: nginx}\n",
      std::string(kGit) + kWebhook + "httpRoute: {enabled: true, parentRefs: [{name: gw}]}\n",
      std::string(kGit) + "image: {digest: 'sha256:" + std::string(64, 'a') + "'}\n"};
  for (const std::string& values : matrix) {
    const HelmResult lint = helm_.Run({"lint", "--strict", ChartDir().string(), "-f",
                                       helm_.WriteValues(values).string()});
    EXPECT_EQ(lint.exit_code, 0) << values << lint.out << lint.err;
  }
}

TEST_F(ChartValuesTest, VersionsComeFromTheProjectAndTheImageTagFromAppVersion) {
  const YAML::Node chart = ChartYaml();
  EXPECT_EQ(chart["version"].as<std::string>(), ProjectVersion());
  EXPECT_EQ(chart["appVersion"].as<std::string>(), ProjectVersion());
  for (const char* key : {"home", "sources", "maintainers"}) EXPECT_TRUE(chart[key]) << key;
  EXPECT_EQ(chart["annotations"]["artifacthub.io/license"].as<std::string>(), "Apache-2.0");
  const YAML::Node images = YAML::Load(chart["annotations"]["artifacthub.io/images"].as<std::string>());
  EXPECT_EQ(images[0]["image"].as<std::string>(),
            "ghcr.io/talos-reconciler/talos-reconciler:" + ProjectVersion());

  const std::string app_version = chart["appVersion"].as<std::string>();
  const YAML::Node c = PodOf(helm_.Template(kGit))["containers"][0];
  EXPECT_EQ(c["image"].as<std::string>(), "ghcr.io/talos-reconciler/talos-reconciler:" + app_version);

  const std::string digest = "sha256:" + std::string(64, 'e');
  const Objects pinned = helm_.Template(
      std::string(kGit) + "image: {repository: registry.example.com/tr, tag: '9.9.9', digest: '" +
      digest + "'}\nreconciler: {kubernetesUpgradeMode: job}\n");
  const YAML::Node pinned_c = PodOf(pinned)["containers"][0];
  EXPECT_EQ(pinned_c["image"].as<std::string>(), "registry.example.com/tr:9.9.9@" + digest);
  // The Kubernetes-upgrade Jobs run the very same image.
  EXPECT_THAT(Args(pinned_c),
              Contains("--kubernetes-upgrade-job-image=registry.example.com/tr:9.9.9@" + digest));
}

TEST_F(ChartValuesTest, PersistenceClaimsTheStateDirectoryAndKeepsOneReplica) {
  const Objects objects = helm_.Template(
      std::string(kGit) +
      "persistence: {enabled: true, storageClassName: fast, size: 5Gi}\n"
      "leaderElection: {enabled: true}\n");
  ASSERT_TRUE(objects.contains("PersistentVolumeClaim/r-talos-reconciler-state"));
  const YAML::Node pvc = objects.at("PersistentVolumeClaim/r-talos-reconciler-state")["spec"];
  EXPECT_EQ(pvc["resources"]["requests"]["storage"].as<std::string>(), "5Gi");
  EXPECT_EQ(pvc["storageClassName"].as<std::string>(), "fast");
  EXPECT_EQ(pvc["accessModes"][0].as<std::string>(), "ReadWriteOnce");
  const YAML::Node pod = PodOf(objects);
  EXPECT_EQ(MountsOf(pod, pod["containers"][0]).at("/var/lib/talos-reconciler"),
            "talos-reconciler-state");
  bool claimed = false;
  for (const YAML::Node& v : pod["volumes"]) {
    if (v["name"].as<std::string>() != "talos-reconciler-state") continue;
    claimed = v["persistentVolumeClaim"]["claimName"].as<std::string>() == "r-talos-reconciler-state";
    EXPECT_FALSE(v["emptyDir"]);
  }
  EXPECT_TRUE(claimed);
  // The old pod lets go of the volume (and the mirror's lock) before the new one starts.
  EXPECT_EQ(objects.at(kDeployment)["spec"]["strategy"]["type"].as<std::string>(), "Recreate");

  const Objects existing = helm_.Template(std::string(kGit) +
                                          "persistence: {enabled: true, existingClaim: mine, "
                                          "storageClassName: '-'}\n");
  EXPECT_FALSE(existing.contains("PersistentVolumeClaim/r-talos-reconciler-state"));
  EXPECT_THAT(YAML::Dump(PodOf(existing)["volumes"]), HasSubstr("claimName: mine"));

  ExpectRefused(std::string(kGit) +
                    "persistence: {enabled: true}\nleaderElection: {enabled: true}\nreplicaCount: 2\n",
                "/replicaCount");
}

TEST_F(ChartValuesTest, ExtraEnvironmentAndVolumesReachTheContainer) {
  const Objects objects = helm_.Template(
      std::string(kGit) +
      "extraEnv: [{name: HTTPS_PROXY, value: 'http://proxy:3128'}]\n"
      "envFrom: [{secretRef: {name: proxy-auth}}]\n"
      "extraVolumes: [{name: corp-ca, configMap: {name: corp-ca}}]\n"
      "extraVolumeMounts: [{name: corp-ca, mountPath: /etc/talos-reconciler/ca, readOnly: true}]\n"
      "reconciler: {extraArgs: [--git-ca-file=/etc/talos-reconciler/ca/ca.crt]}\n");
  const YAML::Node pod = PodOf(objects);
  const YAML::Node c = pod["containers"][0];
  std::map<std::string, std::string> env;
  for (const YAML::Node& e : c["env"]) env[e["name"].as<std::string>()] = e["value"].as<std::string>("");
  EXPECT_EQ(env["HTTPS_PROXY"], "http://proxy:3128");
  EXPECT_TRUE(env.contains("NODE_NAME")) << "the chart's own variables stay";
  EXPECT_EQ(c["envFrom"][0]["secretRef"]["name"].as<std::string>(), "proxy-auth");
  EXPECT_EQ(MountsOf(pod, c).at("/etc/talos-reconciler/ca"), "corp-ca");
  ExpectVolumesForEveryMount(pod, c);
  EXPECT_THAT(Args(c), Contains("--git-ca-file=/etc/talos-reconciler/ca/ca.crt"));
  // Nothing extra by default.
  const YAML::Node plain = PodOf(helm_.Template(kGit))["containers"][0];
  EXPECT_FALSE(plain["envFrom"]);
  EXPECT_EQ(plain["env"].size(), 3u);
}

TEST_F(ChartValuesTest, OpenShiftGetsNoFixedIdsAndKeepsTheRestOfTheHardening) {
  const auto ids = [](const YAML::Node& pod) {
    const YAML::Node c = pod["containers"][0]["securityContext"];
    return std::vector<bool>{static_cast<bool>(c["runAsUser"]), static_cast<bool>(c["runAsGroup"]),
                             static_cast<bool>(pod["securityContext"]["fsGroup"])};
  };
  const std::vector<bool> all{true, true, true};
  const std::vector<bool> none{false, false, false};
  EXPECT_EQ(ids(PodOf(helm_.Template(kGit))), all);
  const YAML::Node openshift =
      PodOf(TemplateWith(kGit, {"--api-versions", "security.openshift.io/v1"}));
  EXPECT_EQ(ids(openshift), none);
  // What restricted-v2 requires stays.
  const YAML::Node sc = openshift["containers"][0]["securityContext"];
  EXPECT_EQ(sc["runAsNonRoot"].as<bool>(), true);
  EXPECT_EQ(sc["allowPrivilegeEscalation"].as<bool>(), false);
  EXPECT_EQ(sc["capabilities"]["drop"][0].as<std::string>(), "ALL");
  EXPECT_EQ(sc["seccompProfile"]["type"].as<std::string>(), "RuntimeDefault");
  EXPECT_EQ(ids(PodOf(helm_.Template(std::string(kGit) + "openshift: {adaptSecurityContext: force}\n"))),
            none);
  EXPECT_EQ(ids(PodOf(TemplateWith(std::string(kGit) + "openshift: {adaptSecurityContext: disabled}\n",
                                   {"--api-versions", "security.openshift.io/v1"}))),
            all);
  // The contexts are values: a user of the chart may set their own.
  const YAML::Node own = PodOf(helm_.Template(
      std::string(kGit) + "securityContext: {runAsNonRoot: true, runAsUser: 4242}\n"
                          "podSecurityContext: {fsGroup: 4242}\n"));
  EXPECT_EQ(own["containers"][0]["securityContext"]["runAsUser"].as<int>(), 4242);
  EXPECT_EQ(own["securityContext"]["fsGroup"].as<int>(), 4242);
}

TEST_F(ChartValuesTest, ProbesAreValuesAndANullOneIsLeftOut) {
  const YAML::Node c = PodOf(helm_.Template(
      std::string(kGit) + "livenessProbe: null\n"
                          "readinessProbe: {httpGet: {path: /readyz, port: metrics}, periodSeconds: 30}\n"))
      ["containers"][0];
  EXPECT_FALSE(c["livenessProbe"]);
  EXPECT_EQ(c["readinessProbe"]["periodSeconds"].as<int>(), 30);
  EXPECT_EQ(c["startupProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
}

TEST_F(ChartValuesTest, IngressAndHttpRouteLeadToTheWebhookPortOnly) {
  const Objects objects = helm_.Template(
      std::string(kGit) + kWebhook +
      "ingress: {enabled: true, className: nginx, hosts: [{host: hooks.example.com, "
      "paths: [{path: /}]}], tls: [{secretName: hooks-tls, hosts: [hooks.example.com]}]}\n"
      "httpRoute: {enabled: true, parentRefs: [{name: public, namespace: gateways}], "
      "hostnames: [hooks.example.com]}\n");
  ASSERT_TRUE(objects.contains("Ingress/r-talos-reconciler"));
  const YAML::Node ingress = objects.at("Ingress/r-talos-reconciler")["spec"];
  EXPECT_EQ(ingress["ingressClassName"].as<std::string>(), "nginx");
  EXPECT_EQ(ingress["tls"][0]["secretName"].as<std::string>(), "hooks-tls");
  const YAML::Node backend = ingress["rules"][0]["http"]["paths"][0]["backend"]["service"];
  EXPECT_EQ(backend["name"].as<std::string>(), "r-talos-reconciler-webhook");
  EXPECT_EQ(backend["port"]["name"].as<std::string>(), "webhook");
  ASSERT_TRUE(objects.contains("Service/r-talos-reconciler-webhook"));

  ASSERT_TRUE(objects.contains("HTTPRoute/r-talos-reconciler"));
  const YAML::Node route = objects.at("HTTPRoute/r-talos-reconciler")["spec"];
  EXPECT_EQ(route["parentRefs"][0]["name"].as<std::string>(), "public");
  EXPECT_EQ(route["rules"][0]["backendRefs"][0]["name"].as<std::string>(),
            "r-talos-reconciler-webhook");
  EXPECT_EQ(route["rules"][0]["backendRefs"][0]["port"].as<int>(), 9090);

  const Objects plain = helm_.Template(kGit);
  EXPECT_FALSE(plain.contains("Ingress/r-talos-reconciler"));
  EXPECT_FALSE(plain.contains("HTTPRoute/r-talos-reconciler"));
  ExpectRefused(std::string(kGit) + "ingress: {enabled: true}\n", "/webhook/enabled");
  ExpectRefused(std::string(kGit) + "httpRoute: {enabled: true}\n", "/webhook/enabled");
}

TEST_F(ChartValuesTest, SchemaRefusesTyposInTheNewValues) {
  const std::vector<std::pair<std::string, std::string>> typos = {
      {"persistence: {enable: true}\n", "'enable' not allowed"},
      {"extraEnvs: []\n", "'extraEnvs' not allowed"},
      {"extraEnv: [{value: x}]\n", "name"},
      {"extraVolumeMounts: [{name: a, mountPath: relative}]\n", "/extraVolumeMounts/0/mountPath"},
      {"ingress: {enabled: false, host: a.example.com}\n", "'host' not allowed"},
      {"image: {repository: r, digest: 'sha256:abc'}\n", "/image/digest"},
      {"openshift: {adaptSecurityContext: yes}\n", "/openshift/adaptSecurityContext"}};
  for (const auto& [values, why] : typos) ExpectRefused(std::string(kGit) + values, why);
}

// A chart that includes the sidecar templates passes Chart and Capabilities (docs/helm.md): the
// sidecar gets the appVersion tag and the OpenShift adaptation too.
TEST_F(ChartValuesTest, SidecarTemplatesTakeTheTagAndCapabilitiesFromTheirContext) {
  const Objects app = helm_.TemplateApp("talos-reconciler:\n  mode: sidecar\n  " + std::string(kGit));
  ASSERT_TRUE(app.contains("Deployment/a-app"));
  const YAML::Node pod = app.at("Deployment/a-app")["spec"]["template"]["spec"];
  EXPECT_EQ(pod["initContainers"][0]["image"].as<std::string>(),
            "ghcr.io/talos-reconciler/talos-reconciler:" + ChartYaml()["appVersion"].as<std::string>());
}

}  // namespace
}  // namespace tr::chart
