#include "reconciler/app/offline_commands.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "base/env.h"
#include "core/status_yaml.h"
#include "nlohmann/json.hpp"
#include "reconciler/features/plan/plan_engine.h"
#include "tests/support/fleet_fixtures.h"

namespace tr::reconciler {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kExamples = fs::path(TR_SOURCE_DIR) / "examples";

class TempRepo {
 public:
  TempRepo() {
    dir_ = fs::temp_directory_path() /
           ("tr-offline-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::create_directories(dir_ / "clusters");
  }
  ~TempRepo() { fs::remove_all(dir_); }
  void Write(const std::string& path, const std::string& content) {
    std::ofstream(dir_ / path) << content;
  }
  const fs::path& dir() const { return dir_; }

 private:
  static inline int counter_ = 0;
  fs::path dir_;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ValidateTest, ExampleRepositoryIsValid) {
  std::ostringstream out, err;
  EXPECT_EQ(RunValidate({kExamples / "repo", ValidateFormat::kText}, out, err), kExitOk)
      << out.str() << err.str();
  EXPECT_EQ(out.str(), "");
  EXPECT_THAT(err.str(), HasSubstr("3 of 3 profiles valid"));
}

TEST(ValidateTest, BrokenProfileIsReportedWithItsPosition) {
  TempRepo repo;
  std::string profile = ReadFile(kExamples / "repo/clusters/edge-lab.yaml");
  repo.Write("clusters/edge-lab.yaml", profile);
  const std::string bad_role = "role: controlplane}";
  profile.replace(profile.find(bad_role), bad_role.size(), "role: boss}");
  repo.Write("clusters/other.yaml", profile);
  std::ostringstream out, err;
  EXPECT_EQ(RunValidate({repo.dir(), ValidateFormat::kText}, out, err), kExitInvalid);
  EXPECT_THAT(out.str(), HasSubstr("clusters/other.yaml:"));
  EXPECT_THAT(out.str(), HasSubstr("spec.nodes[0].role: "));
  EXPECT_THAT(err.str(), HasSubstr("1 of 2 profiles valid"));
}

// A profile that names a schematic file: the file's own errors are reported at its
// line:column (and as annotations on it), beside the profile line that references it.
TEST(ValidateTest, SchematicFileErrorsAreReportedInTheSchematicFile) {
  TempRepo repo;
  fs::create_directories(repo.dir() / "schematics");
  std::string profile = ReadFile(kExamples / "repo/clusters/edge-lab.yaml");
  const std::string image =
      "image: factory.talos.dev/metal-installer/"
      "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";
  ASSERT_NE(profile.find(image), std::string::npos);
  profile.replace(profile.find(image), image.size(), "schematic: {file: schematics/edge.yaml}");
  repo.Write("clusters/edge-lab.yaml", profile);
  repo.Write("schematics/edge.yaml", "customization:\n  extraKernelArg: [quiet]\n");
  std::ostringstream out, err;
  EXPECT_EQ(RunValidate({repo.dir(), ValidateFormat::kText}, out, err), kExitInvalid);
  EXPECT_THAT(out.str(), HasSubstr("clusters/edge-lab.yaml:11:23: spec.talos.schematic.file: "
                                   "schematics/edge.yaml is invalid"));
  EXPECT_THAT(out.str(), HasSubstr("schematics/edge.yaml:2:3: customization.extraKernelArg: "
                                   "unknown key \"extraKernelArg\""));
  std::ostringstream github, github_err;
  EXPECT_EQ(RunValidate({repo.dir(), ValidateFormat::kGithub}, github, github_err), kExitInvalid);
  EXPECT_THAT(github.str(), HasSubstr("::error file=schematics/edge.yaml,line=2"));

  repo.Write("schematics/edge.yaml", "customization:\n  extraKernelArgs: [quiet]\n");
  std::ostringstream fixed, fixed_err;
  EXPECT_EQ(RunValidate({repo.dir(), ValidateFormat::kText}, fixed, fixed_err), kExitOk)
      << fixed.str();
}

// validate --shards N checks spec.shard as `run --shards N` does; without it only its range.
TEST(ValidateTest, ShardsCheckEachProfilesPinnedShard) {
  TempRepo repo;
  repo.Write("clusters/edge-lab.yaml",
             ReadFile(kExamples / "repo/clusters/edge-lab.yaml") + "  shard: 5\n");
  std::ostringstream out, err;
  EXPECT_EQ(RunValidate({repo.dir(), ValidateFormat::kText}, out, err), kExitOk) << out.str();
  std::ostringstream out4, err4;
  EXPECT_EQ(RunValidate({repo.dir(), ValidateFormat::kText, 4}, out4, err4), kExitInvalid);
  EXPECT_THAT(out4.str(), HasSubstr("clusters/edge-lab.yaml:"));
  EXPECT_THAT(out4.str(),
              HasSubstr("spec.shard: must be below the number of shards, 4 (--shards)"));
  std::ostringstream out8, err8;
  EXPECT_EQ(RunValidate({repo.dir(), ValidateFormat::kText, 8}, out8, err8), kExitOk) << out8.str();
}

TEST(ValidateTest, GithubFormatPrintsAnnotations) {
  TempRepo repo;
  repo.Write("clusters/x.yaml", "apiVersion: nope\n");
  std::ostringstream out, err;
  EXPECT_EQ(RunValidate({repo.dir(), ValidateFormat::kGithub}, out, err), kExitInvalid);
  EXPECT_THAT(out.str(), HasSubstr("::error file=clusters/x.yaml,line="));
}

TEST(ValidateTest, MissingDirectoryIsAnError) {
  std::ostringstream out, err;
  EXPECT_EQ(RunValidate({"/nonexistent/tr-dir", ValidateFormat::kText}, out, err), kExitInvalid);
  EXPECT_THAT(err.str(), HasSubstr("no such directory"));
}

// A directory that is not a profile repository fails instead of "0 of 0 profiles valid".
TEST(ValidateTest, DirectoryWithoutClustersIsAnError) {
  TempRepo repo;
  fs::remove_all(repo.dir() / "clusters");
  std::ostringstream out, err;
  EXPECT_EQ(RunValidate({repo.dir(), ValidateFormat::kText}, out, err), kExitInvalid);
  EXPECT_THAT(err.str(), HasSubstr("has no clusters/ directory"));
  EXPECT_THAT(err.str(), Not(HasSubstr("profiles valid")));
}

// The probe: 2,500 profiles of 1 MiB (each within the file limit) aborted with
// bad_alloc. Sparse files: no disk, and 2.5 GB if they were read.
TEST(ValidateTest, ProfilesPastTheByteBudgetAreAClearError) {
  TempRepo repo;
  for (int i = 0; i < 2500; ++i) {
    const fs::path file = repo.dir() / "clusters" / ("c" + std::to_string(i) + ".yaml");
    std::ofstream(file).put('a');
    fs::resize_file(file, 1 << 20);
  }
  std::ostringstream out, err;
  EXPECT_EQ(RunValidate({repo.dir(), ValidateFormat::kText}, out, err), kExitInvalid);
  EXPECT_THAT(err.str(), HasSubstr("2500 profile files of 2621440000 bytes in all: over the "
                                   "watched branch snapshot budget of 64 MiB (67108864 bytes)"));
  EXPECT_THAT(err.str(), Not(HasSubstr("profiles valid")));
}

// `clusters` -> /etc validated as "0 of 0 profiles valid" with exit 0.
TEST(ValidateTest, SymlinkedClustersDirectoryIsAnErrorNamingIt) {
  TempRepo repo;
  fs::remove_all(repo.dir() / "clusters");
  fs::create_directory_symlink("/etc", repo.dir() / "clusters");
  std::ostringstream out, err;
  EXPECT_EQ(RunValidate({repo.dir(), ValidateFormat::kText}, out, err), kExitInvalid);
  EXPECT_THAT(err.str(),
              HasSubstr((repo.dir() / "clusters").string() + " is a symbolic link (to /etc)"));
  EXPECT_THAT(err.str(), Not(HasSubstr("profiles valid")));
}

TEST(PlanCommandTest, BrokenReconcilerYamlShowsItsError) {
  TempRepo repo;
  repo.Write("clusters/edge-lab.yaml", ReadFile(kExamples / "repo/clusters/edge-lab.yaml"));
  repo.Write("reconciler.yaml", "apiVersion: nope\n");
  std::ostringstream out, err;
  EXPECT_EQ(
      RunPlan({repo.dir(), kExamples / "observed.yaml", PlanFormat::kText, {}, {}, {}, {}, true},
              Env::Default(), out, err),
      kExitInvalid);
  EXPECT_THAT(err.str(), HasSubstr("reconciler.yaml:1:"));
}

TEST(GithubEscapeTest, EscapesAsTheRunnerExpects) {
  EXPECT_EQ(EscapeGithubData("50%\nnext"), "50%25%0Anext");
  EXPECT_EQ(EscapeGithubProperty("a:b,c"), "a%3Ab%2Cc");
}

TEST(PlanCommandTest, ExamplePlansAsJson) {
  std::ostringstream out, err;
  int code = RunPlan(
      {kExamples / "repo", kExamples / "observed.yaml", PlanFormat::kJson, {}, {}, {}, {}, true},
      Env::Default(), out, err);
  EXPECT_EQ(code, kExitOk) << err.str();
  nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_EQ(j["clusters"].size(), 3u);
  EXPECT_EQ(j["clusters"][0]["name"], "edge-lab");
  EXPECT_EQ(j["clusters"][0]["plan"], "up-to-date");
  EXPECT_EQ(j["clusters"][0]["phase"], "Ready");
  EXPECT_EQ(j["clusters"][1]["name"], "prod-eu-1");
  EXPECT_EQ(j["clusters"][1]["plan"], "planned");
  EXPECT_EQ(j["clusters"][1]["talos"], (nlohmann::json{{"from", "1.11.6"}, {"to", "1.12.0"}}));
  EXPECT_EQ(j["clusters"][1]["nodes"].size(), 5u);
  EXPECT_EQ(j["clusters"][1]["steps"][0]["nodes"],
            nlohmann::json::array({"w-0", "w-1", "cp-0", "cp-2", "cp-1"}));
  EXPECT_EQ(j["clusters"][1]["steps"][1]["type"], "kubernetes");
  EXPECT_EQ(j["clusters"][2]["name"], "staging");
  EXPECT_EQ(j["clusters"][2]["steps"][0]["type"], "kubernetes");
}

TEST(PlanCommandTest, ClusterMissingFromObservedFileIsBlocked) {
  TempRepo repo;
  repo.Write("clusters/edge-lab.yaml", ReadFile(kExamples / "repo/clusters/edge-lab.yaml"));
  repo.Write("observed.yaml", "clusters: {}\n");
  std::ostringstream out, err;
  EXPECT_EQ(
      RunPlan({repo.dir(), repo.dir() / "observed.yaml", PlanFormat::kText, {}, {}, {}, {}, true},
              Env::Default(), out, err),
      kExitBlocked);
  EXPECT_THAT(out.str(), HasSubstr("was not observed"));
}

TEST(PlanCommandTest, StatusCheckoutShowsEachHealthCheckLastAnswer) {
  TempRepo repo;
  repo.Write("clusters/prod-eu-1.yaml",
             ReadFile(kExamples / "repo/clusters/prod-eu-1.yaml") +
                 "    healthChecks:\n"
                 "      - {name: ingress, type: http, url: http://127.0.0.1:9/healthz}\n"
                 "      - {name: errors, type: http, url: http://127.0.0.1:9/errors}\n"
                 "  promotion: {after: [staging], soak: 24h}\n");
  repo.Write("clusters/staging.yaml", ReadFile(kExamples / "repo/clusters/staging.yaml"));
  repo.Write("observed.yaml", ReadFile(kExamples / "observed.yaml"));
  core::ClusterStatus status;
  status.cluster = "prod-eu-1";
  status.phase = core::ClusterPhase::kWaitingForGate;
  const core::TimePoint checked = *core::ParseTimestamp("2026-11-23T10:00:00Z");
  status.updated = checked;
  status.gates.results = {{"ingress", false, "HTTP 503, expected 200", checked}};
  status.gates.failing_since = *core::ParseTimestamp("2026-11-23T09:30:00Z");
  fs::create_directories(repo.dir() / "branch/status");
  repo.Write("branch/" + core::ClusterStatusPath("prod-eu-1"), core::RenderStatusYaml(status));
  core::ClusterStatus staging;  // Ready for 3 hours, recorded by the daemon
  staging.cluster = "staging";
  staging.updated = Env::Default().Now() - std::chrono::hours(3);
  staging.talos.current = "1.13.9";
  staging.kubernetes.current = "1.36.3";
  staging.conditions.push_back({"Ready", true, "Ready", "", staging.updated});
  repo.Write("branch/" + core::ClusterStatusPath("staging"), core::RenderStatusYaml(staging));
  PlanOptions options{repo.dir(), repo.dir() / "observed.yaml", PlanFormat::kText, {}, {}, {}, {},
                      true};
  std::ostringstream out, err;
  EXPECT_EQ(RunPlan(options, Env::Default(), out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), Not(HasSubstr("; last:")));  // no status checkout: no answers
  options.status_dir = repo.dir() / "branch";
  out.str("");
  EXPECT_EQ(RunPlan(options, Env::Default(), out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("health check ingress: GET http://127.0.0.1:9/healthz answers "
                                   "200"));
  EXPECT_THAT(out.str(), HasSubstr("; last: unhealthy \"HTTP 503, expected 200\" at "
                                   "2026-11-23T10:00:00Z"));
  EXPECT_THAT(out.str(), HasSubstr("errors: GET http://127.0.0.1:9/errors answers 200 (within "
                                   "10s), before the first node of a step, before each further "
                                   "node (after settle) and before a Kubernetes step; last: not "
                                   "checked yet"));
  EXPECT_THAT(out.str(), HasSubstr("failing since 2026-11-23T09:30:00Z"));
  EXPECT_THAT(out.str(), HasSubstr("for 24h; now: waiting for staging (Ready on 1.13.9 for 3h"));
  // A status file that cannot be read back is an error, not a plan without answers.
  repo.Write("branch/" + core::ClusterStatusPath("prod-eu-1"), "phase: [\n");
  err.str("");
  EXPECT_EQ(RunPlan(options, Env::Default(), out, err), kExitInvalid);
  EXPECT_THAT(err.str(), HasSubstr("status/prod-eu-1.yaml:"));
  // A directory that is no status checkout (a typo, the profile checkout) is refused, not read
  // as "nothing recorded" (issue 47).
  for (const fs::path& wrong : {repo.dir() / "brnach", repo.dir()}) {
    options.status_dir = wrong;
    err.str("");
    EXPECT_EQ(RunPlan(options, Env::Default(), out, err), kExitInvalid) << wrong;
    EXPECT_THAT(err.str(), HasSubstr("not a checkout of the status branch")) << wrong;
  }
}

// `plan` marks what the daemon would not do with each step, in every format, by the rollout's
// own decision: a Kubernetes step with --kubernetes-upgrade-mode off (and every step after it),
// a step held by a start check (here paused, and a promotion no status checkout can answer),
// and every step of a cluster halted by a failure on its target.
TEST(PlanCommandTest, MarksStepsTheDaemonWillNotRun) {
  TempRepo repo;
  repo.Write("clusters/prod-eu-1.yaml",
             ReadFile(kExamples / "repo/clusters/prod-eu-1.yaml") + "    paused: true\n");
  repo.Write("clusters/staging.yaml", ReadFile(kExamples / "repo/clusters/staging.yaml"));
  std::string lab = ReadFile(kExamples / "repo/clusters/edge-lab.yaml");
  lab.replace(lab.find("version: 1.11.6"), 15, "version: 1.12.0");
  repo.Write("clusters/edge-lab.yaml", lab + "  promotion: {after: [staging]}\n");
  repo.Write("observed.yaml", ReadFile(kExamples / "observed.yaml"));
  PlanOptions options{repo.dir(), repo.dir() / "observed.yaml", PlanFormat::kJson, {}, {}, {}, {},
                      false};
  std::ostringstream out, err;
  ASSERT_EQ(RunPlan(options, Env::Default(), out, err), kExitOk) << err.str();
  const nlohmann::json j = nlohmann::json::parse(out.str());
  const nlohmann::json& lab_plan = j["clusters"][0];
  EXPECT_EQ(lab_plan["phase"], "WaitingForPromotion");
  EXPECT_EQ(lab_plan["steps"][0]["daemon"], "waits");
  EXPECT_THAT(lab_plan["steps"][0]["reason"].get<std::string>(),
              HasSubstr("spec.promotion not evaluated"));
  const nlohmann::json& prod = j["clusters"][1];
  EXPECT_EQ(prod["phase"], "Paused");
  EXPECT_EQ(prod["steps"][0]["daemon"], "waits");
  EXPECT_EQ(prod["steps"][0]["reason"], "paused by policy");
  EXPECT_EQ(prod["steps"][1]["daemon"], "not-run");
  EXPECT_THAT(prod["steps"][1]["reason"].get<std::string>(),
              HasSubstr("--kubernetes-upgrade-mode off"));
  const nlohmann::json& staging = j["clusters"][2];
  EXPECT_EQ(staging["phase"], "Blocked");
  EXPECT_EQ(staging["steps"][0]["daemon"], "not-run");
  EXPECT_THAT(staging["next"].get<std::string>(),
              HasSubstr("run talos-reconciler upgrade-k8s --cluster staging --to 1.36.3"));
  options.format = PlanFormat::kText;
  out.str("");
  ASSERT_EQ(RunPlan(options, Env::Default(), out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("     daemon waits: paused by policy\n"));
  EXPECT_THAT(out.str(), HasSubstr("     daemon will not run it: this daemon does not run "
                                   "Kubernetes steps (--kubernetes-upgrade-mode off)"));
  options.format = PlanFormat::kMarkdown;
  out.str("");
  ASSERT_EQ(RunPlan(options, Env::Default(), out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("| will not run it: this daemon does not run Kubernetes"));

  // A rollout that failed on this target: the daemon runs nothing until talos.version changes.
  core::ClusterStatus failed;
  failed.cluster = "prod-eu-1";
  failed.phase = core::ClusterPhase::kUpgradeFailed;
  failed.rollout.failure = core::RolloutFailure{"w-0", *core::ParseTalosVersion("1.12.0"),
                                                "node w-0 did not become healthy",
                                                *core::ParseTimestamp("2026-11-23T10:00:00Z")};
  fs::create_directories(repo.dir() / "branch/status");
  repo.Write("branch/" + core::ClusterStatusPath("prod-eu-1"), core::RenderStatusYaml(failed));
  options.status_dir = repo.dir() / "branch";
  options.format = PlanFormat::kJson;
  out.str("");
  ASSERT_EQ(RunPlan(options, Env::Default(), out, err), kExitOk) << err.str();
  const nlohmann::json halted = nlohmann::json::parse(out.str())["clusters"][1];
  EXPECT_EQ(halted["phase"], "UpgradeFailed");
  for (const nlohmann::json& step : halted["steps"]) {
    EXPECT_EQ(step["daemon"], "not-run");
    EXPECT_THAT(step["reason"].get<std::string>(),
                HasSubstr("halted: node w-0 did not become healthy"));
  }
}

// A node rebooting in a rollout the status branch records cannot be observed, which blocks a
// plan; the daemon follows it all the same, so `plan --status` says what it does next and does
// not exit as blocked. Without the status branch the plan is blocked.
TEST(PlanCommandTest, ANodeInFlightThatDoesNotAnswerIsFollowedNotBlocked) {
  TempRepo repo;
  repo.Write("clusters/prod-eu-1.yaml", ReadFile(kExamples / "repo/clusters/prod-eu-1.yaml"));
  std::string observed = ReadFile(kExamples / "observed.yaml");
  const std::string w0 = "w-0: {talos: 1.11.6, kubelet: 1.34.1, ready: true}";
  observed.replace(observed.find(w0), w0.size(), "w-0: {reachable: false}");
  repo.Write("observed.yaml", observed);
  PlanOptions options{repo.dir(), repo.dir() / "observed.yaml", PlanFormat::kText, {}, {}, {}, {},
                      true};
  std::ostringstream out, err;
  EXPECT_EQ(RunPlan(options, Env::Default(), out, err), kExitBlocked) << err.str();
  EXPECT_THAT(out.str(), Not(HasSubstr("next:")));

  core::ClusterStatus upgrading;
  upgrading.cluster = "prod-eu-1";
  upgrading.phase = core::ClusterPhase::kUpgradingTalos;
  upgrading.rollout = core::testing_fixtures::NodeInFlight("w-0", "1.12.0", Env::Default().Now());
  fs::create_directories(repo.dir() / "branch/status");
  repo.Write("branch/" + core::ClusterStatusPath("prod-eu-1"), core::RenderStatusYaml(upgrading));
  options.status_dir = repo.dir() / "branch";
  out.str("");
  EXPECT_EQ(RunPlan(options, Env::Default(), out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("prod-eu-1: blocked\n"));
  EXPECT_THAT(out.str(), HasSubstr("node w-0 is unreachable"));
  EXPECT_THAT(out.str(), HasSubstr("  next: w-0"));
  EXPECT_THAT(out.str(), HasSubstr("(UpgradingTalos)"));
  options.format = PlanFormat::kMarkdown;
  out.str("");
  EXPECT_EQ(RunPlan(options, Env::Default(), out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("Next: w-0"));
}

// The real binary, as CI runs it.
int RunBinary(const std::string& args, std::string& output) {
  const std::string command =
      std::string(TR_BINARY_DIR) + "/reconciler/talos-reconciler " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(BinaryTest, ValidateAndPlanExitCodes) {
  std::string output;
  EXPECT_EQ(RunBinary("validate " + (kExamples / "repo").string(), output), 0) << output;
  output.clear();
  EXPECT_EQ(RunBinary("plan " + (kExamples / "repo").string() + " --observed " +
                          (kExamples / "observed.yaml").string(),
                      output),
            0)
      << output;
  EXPECT_THAT(output, HasSubstr("prod-eu-1: planned"));
  output.clear();
  EXPECT_EQ(RunBinary("plan -o html --observed x", output), 1);
  EXPECT_THAT(output, HasSubstr("--output"));
  output.clear();  // the flag plan had before -o still works, and says it is deprecated
  EXPECT_EQ(RunBinary("plan " + (kExamples / "repo").string() + " --format json --observed " +
                          (kExamples / "observed.yaml").string(),
                      output),
            0)
      << output;
  EXPECT_THAT(output, HasSubstr("warning: --format is deprecated; use -o"));
}

}  // namespace
}  // namespace tr::reconciler
