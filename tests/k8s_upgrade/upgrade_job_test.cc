// The Job of `--kubernetes-upgrade-mode job` (reconciler/features/k8s_job/upgrade_job.h): its name,
// the files it hands `upgrade-k8s` (read back with the real profile decoder), its failure policy,
// and what the daemon reads from a Job and its pods.
#include "reconciler/features/k8s_job/upgrade_job.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/profile_set.h"
#include "nlohmann/json.hpp"

namespace tr::reconciler::k8s_job {
namespace {

using k8s_upgrade::UpgradeTaskStatus;
using nlohmann::json;

core::Version V(const char* text) { return *core::ParseKubernetesVersion(text); }

core::ClusterProfile Profile(std::string name) {
  core::ClusterProfile p;
  p.name = std::move(name);
  p.endpoints = {"10.0.0.1"};
  p.credentials = "prod";
  p.talos_version = *core::ParseTalosVersion("1.12.0");
  p.talos_image = "factory.talos.dev/installer/abc";
  p.kubernetes_version = V("1.34.1");
  p.nodes = {{"cp-1", "10.0.0.1", core::NodeRole::kControlPlane},
             {"w-1", "10.0.0.2", core::NodeRole::kWorker}};
  return p;
}

TEST(UpgradeJobTest, NameIsADeterministicDnsLabelOfAtMost63Characters) {
  EXPECT_EQ(UpgradeJobName("prod-eu-1", V("1.35.0")), "k8s-upgrade-prod-eu-1-v1-35-0");
  EXPECT_EQ(UpgradeJobName("a.b", V("1.35.0")), "k8s-upgrade-a-b-v1-35-0");
  const std::string long_a(80, 'a');
  const std::string name = UpgradeJobName(long_a, V("1.35.10"));
  EXPECT_LE(name.size(), 63u);
  EXPECT_TRUE(name.ends_with("-v1-35-10")) << name;
  EXPECT_EQ(name, UpgradeJobName(long_a, V("1.35.10")));
  EXPECT_NE(name, UpgradeJobName(long_a + "b", V("1.35.10")));  // the hash tells them apart
  EXPECT_LE(ClusterLabelValue(long_a).size(), 63u);
}

TEST(UpgradeJobTest, JobCarriesProfileMatrixSecretAndFailurePolicy) {
  UpgradeJobSettings settings;
  settings.namespace_name = "ops";
  settings.image = "registry.example.com/talos-reconciler:1.0.0";
  settings.secret_name = "prod-talosconfig";
  core::SupportMatrix matrix = core::SupportMatrix::BuiltIn();
  const json job = json::parse(UpgradeJobJson(Profile("prod"), V("1.35.0"), matrix, settings));
  EXPECT_EQ(job["metadata"]["name"], "k8s-upgrade-prod-v1-35-0");
  EXPECT_EQ(job["metadata"]["namespace"], "ops");
  EXPECT_EQ(job["metadata"]["labels"]["talos-reconciler.dev/cluster"], "prod");
  const json& spec = job["spec"];
  EXPECT_EQ(spec["template"]["spec"]["restartPolicy"], "Never");
  const json& rules = spec["podFailurePolicy"]["rules"];
  EXPECT_EQ(rules[0]["action"], "FailJob");
  EXPECT_EQ(rules[0]["onExitCodes"]["values"], json({1, 2, 3}));
  EXPECT_EQ(rules[1]["action"], "Ignore");
  EXPECT_EQ(rules[1]["onPodConditions"][0]["type"], "DisruptionTarget");
  EXPECT_EQ(spec["activeDeadlineSeconds"], 7200);
  const json& c = spec["template"]["spec"]["containers"][0];
  EXPECT_EQ(c["image"], settings.image);
  EXPECT_EQ(c["terminationMessagePath"], "/dev/termination-log");
  EXPECT_THAT(c["args"].get<std::vector<std::string>>(),
              ::testing::IsSupersetOf({"upgrade-k8s", "--cluster", "prod", "--to", "1.35.0",
                                       "--termination-log", "/dev/termination-log"}));
  EXPECT_THAT(c["args"].get<std::vector<std::string>>(),
              ::testing::Not(::testing::Contains("--manifests-no-prune")));
  // The daemon's --kubernetes-manifests-no-prune reaches the Job's command.
  UpgradeJobSettings no_prune = settings;
  no_prune.prune_manifests = false;
  const json kept = json::parse(UpgradeJobJson(Profile("prod"), V("1.35.0"), matrix, no_prune));
  EXPECT_THAT(
      kept["spec"]["template"]["spec"]["containers"][0]["args"].get<std::vector<std::string>>(),
      ::testing::Contains("--manifests-no-prune"));
  EXPECT_EQ(c["volumeMounts"][0]["mountPath"], "/etc/talos-reconciler/talos/prod");
  EXPECT_EQ(spec["template"]["spec"]["volumes"][0]["secret"]["secretName"], "prod-talosconfig");

  // The annotations the downwardAPI volume projects are a valid profile and reconciler.yaml.
  const json& annotations = spec["template"]["metadata"]["annotations"];
  const core::ProfileSet set = core::DecodeProfileSet(
      {{"clusters/prod.yaml", annotations["talos-reconciler.dev/profile"].get<std::string>()},
       {"reconciler.yaml",
        annotations["talos-reconciler.dev/repository-defaults"].get<std::string>()}},
      {});
  ASSERT_EQ(set.profiles.size(), 1u) << (set.invalid.empty() ? set.defaults_diagnostics.size()
                                                             : set.invalid[0].diagnostics.size());
  EXPECT_TRUE(set.defaults_diagnostics.empty());
  const core::ClusterProfile& back = set.profiles[0];
  EXPECT_EQ(back.kubernetes_version.ToString(), "1.35.0");
  ASSERT_EQ(back.nodes.size(), 2u);
  EXPECT_EQ(back.nodes[1].address, "10.0.0.2");
  EXPECT_EQ(back.nodes[1].role, core::NodeRole::kWorker);
  for (const core::MinorVersion& talos : matrix.TalosMinors()) {
    EXPECT_EQ(set.support_matrix.Find(talos)->kubernetes_max.ToString(),
              matrix.Find(talos)->kubernetes_max.ToString());
  }
}

// The Job remembers the retry it was made for, so that a failed one under an older retry is
// replaced once `talos-reconciler retry` asks again; a profile with no retry adds nothing.
TEST(UpgradeJobTest, JobCarriesTheRetryItWasMadeFor) {
  const core::SupportMatrix matrix = core::SupportMatrix::BuiltIn();
  const std::string plain = UpgradeJobJson(Profile("prod"), V("1.35.0"), matrix, {});
  EXPECT_FALSE(json::parse(plain)["metadata"].contains("annotations"));
  core::ClusterProfile asked = Profile("prod");
  asked.retry_token = "2026-12-02T10:15:00Z";
  const std::string job = UpgradeJobJson(asked, V("1.35.0"), matrix, {});
  EXPECT_EQ(json::parse(job)["metadata"]["annotations"]["talos-reconciler.dev/retry"],
            "2026-12-02T10:15:00Z");
  auto read = ReadUpgradeJob(job, R"({"items":[]})");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->task.retry_token, "2026-12-02T10:15:00Z");
  EXPECT_EQ(ReadUpgradeJob(plain, R"({"items":[]})")->task.retry_token, "");
}

json JobWith(json status) {
  return {{"metadata",
           {{"name", "k8s-upgrade-prod-v1-35-0"},
            {"labels", {{"talos-reconciler.dev/kubernetes-version", "1.35.0"}}}}},
          {"status", std::move(status)}};
}

json PodsTerminated(int exit_code, const std::string& message) {
  return {{"items",
           {{{"status",
              {{"containerStatuses",
                {{{"name", "upgrade-k8s"},
                  {"state",
                   {{"terminated",
                     {{"exitCode", exit_code},
                      {"message", message},
                      {"finishedAt", "2026-11-23T10:00:00Z"}}}}}}}}}}}}}};
}

TEST(UpgradeJobTest, ReadsRunningCompleteAndFailedJobs) {
  auto running = ReadUpgradeJob(JobWith({{"active", 1}, {"failed", 1}}).dump(),
                                PodsTerminated(137, "").dump());
  ASSERT_TRUE(running.ok()) << running.status();
  EXPECT_EQ(running->task.state, UpgradeTaskStatus::State::kRunning);
  EXPECT_EQ(running->task.progress, "Job k8s-upgrade-prod-v1-35-0 running, attempt 2");

  auto done =
      ReadUpgradeJob(JobWith({{"conditions", {{{"type", "Complete"}, {"status", "True"}}}}}).dump(),
                     R"({"items":[]})");
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->task.state, UpgradeTaskStatus::State::kSucceeded);

  const json failed_status = {
      {"failed", 1},
      {"conditions", {{{"type", "Failed"}, {"status", "True"}, {"reason", "PodFailurePolicy"}}}}};
  auto failed = ReadUpgradeJob(
      JobWith(failed_status).dump(),
      PodsTerminated(3,
                     "upgrade-k8s: kube-controller-manager failed on cp-2: not Ready within 5m\n")
          .dump());
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->task.state, UpgradeTaskStatus::State::kFailed);
  EXPECT_FALSE(failed->retry);
  EXPECT_EQ(failed->task.outcome.component, "kube-controller-manager");
  EXPECT_EQ(failed->task.outcome.node, "cp-2");
  EXPECT_EQ(failed->task.outcome.status.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(failed->task.outcome.status.message(), "not Ready within 5m");

  auto refused = ReadUpgradeJob(
      JobWith(failed_status).dump(),
      PodsTerminated(2, "upgrade-k8s: pre-checks failed: Talos 1.9.0 on w-1 is too old").dump());
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->task.outcome.component, "pre-checks");
  EXPECT_EQ(refused->task.outcome.status.code(), absl::StatusCode::kFailedPrecondition);

  // The backoff limit spent on exit code 4: worth a new Job, which resumes.
  auto retry = ReadUpgradeJob(
      JobWith({{"conditions",
                {{{"type", "Failed"}, {"status", "True"}, {"reason", "BackoffLimitExceeded"}}}}})
          .dump(),
      PodsTerminated(4, "upgrade-k8s: stopped before kubelet on w-1; run again to resume").dump());
  ASSERT_TRUE(retry.ok());
  EXPECT_TRUE(retry->retry);
  EXPECT_EQ(retry->task.outcome.status.code(), absl::StatusCode::kUnavailable);

  EXPECT_EQ(ReadUpgradeJob("not json", "{}").status().code(), absl::StatusCode::kInternal);
}

TEST(UpgradeJobTest, NamesTheRunningPodAndReadsProgressFromItsLog) {
  json pods = PodsTerminated(137, "");
  pods["items"].push_back(
      {{"metadata", {{"name", "k8s-upgrade-prod-v1-35-0-xyz12"}}},
       {"status",
        {{"containerStatuses", {{{"name", "upgrade-k8s"}, {"state", {{"running", json::object()}}}}}}}}});
  auto running = ReadUpgradeJob(JobWith({{"active", 1}, {"failed", 1}}).dump(), pods.dump());
  ASSERT_TRUE(running.ok()) << running.status();
  EXPECT_EQ(running->running_pod, "k8s-upgrade-prod-v1-35-0-xyz12");
  EXPECT_EQ(ReadUpgradeJob(JobWith({{"active", 1}}).dump(), PodsTerminated(137, "").dump())
                ->running_pod,
            "");

  EXPECT_EQ(ProgressOfLog("pre-checks: upgrade path 1.34.1 → 1.35.0\n"
                          "static pods 3/3: kube-scheduler on cp-1 Ready at 1.35.0\n"
                          "kubelet on w-1: 1.34.1 → 1.35.0 (apply, no reboot)\n"
                          "kubelets 3/5: w-1 at v1.35.0\n"
                          "kubelet on w-2: 1.34.1 → 1.35.0 (apply, no reboot)\n"),
            "kubelets 3/5");
  EXPECT_EQ(ProgressOfLog("manifests 2/40: ConfigMap kube-system/x applied"), "manifests 2/40");
  EXPECT_EQ(ProgressOfLog("pre-checks: no removed API\nimage pull x/1: y\n"), "");
  EXPECT_EQ(ProgressOfLog(""), "");
}

}  // namespace
}  // namespace tr::reconciler::k8s_job
