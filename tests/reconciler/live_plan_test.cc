// `plan --credentials-dir`: the real observer against talos-sim over mutual TLS; and the daemon
// (`talos-reconciler run`) on the same kind of broken talosconfig.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>

#include "base/env.h"
#include "fmt/format.h"
#include "gitsource/subprocess.h"
#include "nlohmann/json.hpp"
#include "reconciler/features/plan/plan_engine.h"
#include "tests/reconciler/sim_fleet_fixture.h"
#include "tests/sim/common/pki.h"
#include "tests/support/process.h"
#include "tests/support/repos.h"

namespace tr::reconciler {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct ProfileNode {
  std::string name;
  std::string address;
  std::string role;
};

// The profile of `cluster` asking for Talos `talos`, reached through its first node's address,
// with the credentials (a directory or a talosconfig context) named `credentials`.
std::string Profile(const std::string& cluster, const std::string& credentials,
                    const std::string& talos, const std::vector<ProfileNode>& nodes,
                    const std::string& kubernetes = "1.34.1") {
  std::string text = "apiVersion: talos-reconciler.dev/v1alpha1\nkind: ClusterProfile\n";
  text += "metadata: {name: " + cluster + "}\nspec:\n  endpoints: [" + nodes.front().address +
          "]\n  credentials: " + credentials + "\n  talos: {version: " + talos +
          ", image: factory.talos.dev/metal-installer/abc}\n"
          "  kubernetes: {version: " + kubernetes + "}\n  nodes:\n";
  for (const ProfileNode& n : nodes) {
    text += "    - {name: " + n.name + ", address: " + n.address + ", role: " + n.role + "}\n";
  }
  return text;
}

// A directory of its own with an empty repo/clusters, and the talos-sim fleet a test starts in
// it (sim_fleet_fixture.h).
// Appends what the pipe `fd` yields to `text`, each read waiting on the bytes themselves,
// until `enough(text)` holds (true), the writers close it (then enough(text)) or `within`
// passes (false).
bool ReadPipeUntil(int fd, std::string& text, std::chrono::milliseconds within,
                   const std::function<bool(const std::string&)>& enough) {
  Env& env = Env::Default();
  const Env::Instant deadline = env.Monotonic() + within;
  char buffer[4096];
  while (!enough(text)) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - env.Monotonic());
    pollfd readable{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&readable, 1, static_cast<int>(left.count())) <= 0) {
      return false;
    }
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) return enough(text);
    text.append(buffer, static_cast<size_t>(n));
  }
  return true;
}

class LivePlanTest : public SimFleetFixture {
 protected:
  LivePlanTest() : SimFleetFixture("tr-live-plan") {}
  // One cluster, lab, of one control plane named lab.
  void StartLab() {
    StartFleet(R"(
time_scale: 0.001
address_prefix: auto
clusters:
  - name: lab
    nodes:
      - {name: lab, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
)");
  }
  std::string Address(const std::string& node) { return *fleet_->NodeAddress(node); }
};

TEST_F(LivePlanTest, ObservesTheFleetAndPlansIt) {
  StartFleet(R"(
time_scale: 0.001
address_prefix: auto
clusters:
  - name: live
    nodes:
      - {name: live-cp, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: live-w0, role: worker, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: live-w1, role: worker, talos: v1.12.0, kubernetes: 1.34.1}
)");
  if (HasFatalFailure()) return;
  const std::string cp = Address("live-cp");
  std::ofstream(dir_ / "repo/clusters/live.yaml")
      << Profile("live", "live", "1.12.0",
                 {{"live-cp", cp, "controlplane"},
                  {"live-w0", Address("live-w0"), "worker"},
                  {"live-w1", Address("live-w1"), "worker"}});
  std::ostringstream out, err;
  PlanOptions options{dir_ / "repo", {}, PlanFormat::kJson, dir_ / "sim", "live-w0", {}, {}, true};
  EXPECT_EQ(RunPlan(options, Env::Default(), out, err), kExitOk) << err.str() << out.str();
  nlohmann::json j = nlohmann::json::parse(out.str());
  const auto& cluster = j["clusters"][0];
  EXPECT_EQ(cluster["plan"], "planned");
  EXPECT_EQ(cluster["talos"]["from"], "1.11.6");
  EXPECT_EQ(cluster["kubernetes"]["from"], "1.34.1");
  // live-w1 already runs 1.12.0; the own node live-w0 goes last among the workers anyway.
  EXPECT_EQ(cluster["steps"][0]["nodes"], nlohmann::json::array({"live-w0", "live-cp"}));
}

// A Kubernetes step shows where each node keeps its Kubernetes settings, read from the nodes'
// configurations: the document shape Talos 1.14 generates, one partly migrated by hand, one
// made before 1.14.
TEST_F(LivePlanTest, KubernetesStepShowsWhereEachNodeKeepsItsSettings) {
  StartFleet(R"(
time_scale: 0.001
address_prefix: auto
clusters:
  - name: new
    nodes:
      - {name: new-cp, role: controlplane, talos: v1.14.0, kubernetes: 1.36.3}
      - {name: new-cp2, role: controlplane, talos: v1.14.0, kubernetes: 1.36.3, config: partly_migrated}
      - {name: new-w0, role: worker, talos: v1.14.0, kubernetes: 1.36.3, config: v1alpha1}
)");
  if (HasFatalFailure()) return;
  std::ofstream(dir_ / "repo/clusters/new.yaml")
      << Profile("new", "new", "1.14.0",
                 {{"new-cp", Address("new-cp"), "controlplane"},
                  {"new-cp2", Address("new-cp2"), "controlplane"},
                  {"new-w0", Address("new-w0"), "worker"}},
                 "1.37.0");
  std::ostringstream out, err;
  PlanOptions options{dir_ / "repo", {}, PlanFormat::kText, dir_ / "sim", "", {}, {}, true};
  EXPECT_EQ(RunPlan(options, Env::Default(), out, err), kExitOk) << err.str() << out.str();
  EXPECT_THAT(out.str(), HasSubstr("     Kubernetes settings kept in:\n"
                                   "       documents: new-cp\n"
                                   "       mixed (documents: kubelet; v1alpha1: kube-apiserver, "
                                   "kube-controller-manager, kube-scheduler, kube-proxy): new-cp2\n"
                                   "       v1alpha1: new-w0\n"));

  std::ostringstream json, json_err;
  options.format = PlanFormat::kJson;
  EXPECT_EQ(RunPlan(options, Env::Default(), json, json_err), kExitOk) << json_err.str();
  const nlohmann::json step = nlohmann::json::parse(json.str())["clusters"][0]["steps"][0];
  ASSERT_EQ(step["type"], "kubernetes") << json.str();
  ASSERT_EQ(step["kubernetesConfig"].size(), 3u) << json.str();
  EXPECT_EQ(step["kubernetesConfig"][0]["node"], "new-cp");
  EXPECT_EQ(step["kubernetesConfig"][0]["shape"], "documents");
  EXPECT_EQ(step["kubernetesConfig"][2]["shape"], "v1alpha1");
  EXPECT_TRUE(step["kubernetesConfig"][2]["problem"].is_null());

  // The pull-request comment says the same, the nodes asked at the watched branch's endpoints.
  auto profile_at = [&](const std::string& kubernetes) {
    return Profile("new", "new", "1.14.0",
                   {{"new-cp", Address("new-cp"), "controlplane"},
                    {"new-cp2", Address("new-cp2"), "controlplane"},
                    {"new-w0", Address("new-w0"), "worker"}},
                   kubernetes);
  };
  const PlanPreview preview = PreviewPlan({{"clusters/new.yaml", profile_at("1.37.0")}},
                                          {{"clusters/new.yaml", profile_at("1.36.3")}},
                                          {dir_ / "sim", {}}, "", Env::Default());
  EXPECT_THAT(preview.markdown, HasSubstr("Kubernetes settings kept in:\n\n- documents: `new-cp`\n"));
  EXPECT_THAT(preview.markdown, HasSubstr("- v1alpha1: `new-w0`\n"));
}

// The drain forecast, read live from the cluster's Kubernetes API (talos-sim's): the pod a
// budget holds named on its node, an unmanaged pod named as deleted, the other nodes clear;
// in the plan and in the pull request's comment.
TEST_F(LivePlanTest, DrainForecastNamesWhatHoldsEachNode) {
  StartFleet(R"(
time_scale: 0.001
address_prefix: auto
clusters:
  - name: shop
    nodes:
      - {name: shop-cp, role: controlplane, talos: v1.13.2, kubernetes: 1.35.0}
      - {name: shop-w0, role: worker, talos: v1.13.2, kubernetes: 1.35.0}
      - {name: shop-w1, role: worker, talos: v1.13.2, kubernetes: 1.35.0}
    pods:
      - {name: db-0, namespace: shop, node: shop-w1, labels: {app: db}}
      - {name: debug, namespace: shop, node: shop-w0, labels: {app: debug}, replicated: false}
      - {name: web-a, namespace: shop, node: shop-w0, labels: {app: web}}
      - {name: web-b, namespace: shop, node: shop-w1, labels: {app: web}}
    pdbs:
      - {name: db, namespace: shop, selector: {app: db}, min_available: 1}
      - {name: web, namespace: shop, selector: {app: web}, max_unavailable: 1}
)");
  if (HasFatalFailure()) return;
  auto profile_at = [&](const std::string& talos) {
    return Profile("shop", "shop", talos,
                   {{"shop-cp", Address("shop-cp"), "controlplane"},
                    {"shop-w0", Address("shop-w0"), "worker"},
                    {"shop-w1", Address("shop-w1"), "worker"}},
                   "1.35.0");
  };
  std::ofstream(dir_ / "repo/clusters/shop.yaml") << profile_at("1.13.9");
  std::ostringstream out, err;
  PlanOptions options{dir_ / "repo", {}, PlanFormat::kText, dir_ / "sim", "", {}, {}, true};
  EXPECT_EQ(RunPlan(options, Env::Default(), out, err), kExitOk) << err.str() << out.str();
  EXPECT_THAT(out.str(), HasSubstr("  drain forecast (policy.drain.onTimeout: halt):\n"
                                   "    shop-w0: drains\n"
                                   "      deleted shop/debug: no controller: the drain deletes it "
                                   "and nothing recreates it\n"
                                   "    shop-w1: waits the timeout, then halts before the reboot\n"
                                   "      blocks shop/db-0: budget shop/db allows no eviction "
                                   "(needs 1 healthy, has 1)\n"
                                   "    nothing in the way: shop-cp\n"));
  const PlanPreview preview =
      PreviewPlan({{"clusters/shop.yaml", profile_at("1.13.9")}},
                  {{"clusters/shop.yaml", profile_at("1.13.2")}}, {dir_ / "sim", {}}, "",
                  Env::Default());
  EXPECT_THAT(preview.markdown, HasSubstr("#### Drain forecast\n"));
  EXPECT_THAT(preview.markdown,
              HasSubstr("| `shop-w1` | **blocks** `shop/db-0`: budget shop/db allows no eviction"));
  EXPECT_THAT(preview.markdown, HasSubstr("Nothing in the way on `shop-cp`."));
}

// A cluster whose API refuses the forecast's reads still gets its plan, which says why.
TEST_F(LivePlanTest, DrainForecastRefusedReadsLeaveThePlanAndSayWhy) {
  StartFleet(R"(
time_scale: 0.001
address_prefix: auto
clusters:
  - name: tight
    nodes:
      - {name: tight-cp, role: controlplane, talos: v1.13.2, kubernetes: 1.35.0}
      - {name: tight-w0, role: worker, talos: v1.13.2, kubernetes: 1.35.0}
    deny_reads: [pods]
)");
  if (HasFatalFailure()) return;
  std::ofstream(dir_ / "repo/clusters/tight.yaml")
      << Profile("tight", "tight", "1.13.9",
                 {{"tight-cp", Address("tight-cp"), "controlplane"},
                  {"tight-w0", Address("tight-w0"), "worker"}},
                 "1.35.0");
  std::ostringstream out, err;
  PlanOptions options{dir_ / "repo", {}, PlanFormat::kText, dir_ / "sim", "", {}, {}, true};
  EXPECT_EQ(RunPlan(options, Env::Default(), out, err), kExitOk) << err.str() << out.str();
  EXPECT_THAT(out.str(), HasSubstr("tight: planned\n"));
  EXPECT_THAT(out.str(), HasSubstr("  drain forecast: none: the Kubernetes API refused the reads "
                                   "(list pods: "));
  EXPECT_THAT(out.str(), HasSubstr("cannot list resource \"pods\""));
  EXPECT_THAT(out.str(), HasSubstr("grant the reconciler the read-only ClusterRole"));
}

// The context blocks of a talosconfig file (the lines under `contexts:`).
std::string ContextBlocks(const fs::path& talosconfig) {
  std::ifstream in(talosconfig);
  std::ostringstream content;
  content << in.rdbuf();
  const std::string text = content.str();
  const size_t at = text.find("contexts:\n");
  return at == std::string::npos ? "" : text.substr(at + 10);
}

// `plan --talosconfig`: one file with a context per cluster; a profile's spec.credentials names
// its context, whatever the file's current context is.
TEST_F(LivePlanTest, OneTalosconfigWithAContextPerCluster) {
  StartFleet(R"(
time_scale: 0.001
address_prefix: auto
clusters:
  - name: solo
    nodes:
      - {name: solo-cp, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
  - name: other
    nodes:
      - {name: other-cp, role: controlplane, talos: v1.12.0, kubernetes: 1.34.1}
)");
  if (HasFatalFailure()) return;
  std::ofstream(dir_ / "talosconfig") << "context: other\ncontexts:\n"
                                      << ContextBlocks(dir_ / "sim/other/talosconfig")
                                      << ContextBlocks(dir_ / "sim/solo/talosconfig");
  const std::string cp = Address("solo-cp");
  std::ofstream(dir_ / "repo/clusters/solo.yaml")
      << Profile("solo", "solo", "1.12.0", {{"solo-cp", cp, "controlplane"}});
  std::ostringstream out, err;
  PlanOptions options{dir_ / "repo", {}, PlanFormat::kJson, {}, "", {}, dir_ / "talosconfig", true};
  EXPECT_EQ(RunPlan(options, Env::Default(), out, err), kExitOk) << err.str() << out.str();
  nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["clusters"][0]["plan"], "planned");
  EXPECT_EQ(j["clusters"][0]["talos"]["from"], "1.11.6");  // solo's node, not other's
  // A context the file does not have is named.
  std::ofstream(dir_ / "repo/clusters/solo.yaml")
      << Profile("solo", "gone", "1.12.0", {{"solo-cp", cp, "controlplane"}});
  std::ostringstream out2, err2;
  EXPECT_EQ(RunPlan(options, Env::Default(), out2, err2), kExitBlocked) << err2.str() << out2.str();
  EXPECT_THAT(err2.str(), HasSubstr("gone"));
}

// Replaces the value of `field` (ca, crt or key) in every context of the talosconfig at `path`.
void ReplaceMaterial(const fs::path& path, const std::string& field, const std::string& pem) {
  std::ifstream in(path);
  std::string text, line;
  while (std::getline(in, line)) {
    const size_t at = line.find(field + ": ");
    if (at != std::string::npos && line.find_first_not_of(' ') == at) {
      line = line.substr(0, at) + field + ": " + sim::Base64(pem);
    }
    text += line + "\n";
  }
  std::ofstream(path) << text;
}

// Another cluster's CA certificate, and an admin certificate and key it issued.
struct Stranger {
  std::string ca_pem;
  sim::CertifiedKey admin;
};

void MakeStranger(Stranger* out) {
  absl::StatusOr<sim::CertificateAuthority> other =
      sim::CertificateAuthority::Create("other", sim::KeyType::kEd25519);
  ASSERT_TRUE(other.ok()) << other.status();
  sim::LeafRequest admin;
  admin.common_name = "admin";
  admin.organizations = {"os:admin"};
  absl::StatusOr<sim::CertifiedKey> issued = other->Issue(admin);
  ASSERT_TRUE(issued.ok()) << issued.status();
  *out = {other->cert_pem(), *std::move(issued)};
}

// A talosconfig whose material is damaged or does not belong together names the file, the
// context and the field, and the plan says so, instead of every node reading as unreachable
// (with gRPC's own lines on stderr).
TEST_F(LivePlanTest, BrokenTalosconfigNamesTheFileAndTheField) {
  ASSERT_NO_FATAL_FAILURE(StartLab());
  const std::string cp = Address("lab");
  std::ofstream(dir_ / "repo/clusters/lab.yaml")
      << Profile("lab", "lab", "1.12.0", {{"lab", cp, "controlplane"}});
  const fs::path file = dir_ / "creds/lab/talosconfig";
  const std::string damaged_key =
      "-----BEGIN ED25519 PRIVATE KEY-----\nAAAA\n-----END ED25519 PRIVATE KEY-----\n";
  Stranger other;
  ASSERT_NO_FATAL_FAILURE(MakeStranger(&other));
  struct Case {
    std::vector<std::pair<std::string, std::string>> material;  // field, PEM
    std::string expected;
  } cases[] = {
      {{{"key", damaged_key}}, "contexts.lab: key: not a private key that can be read"},
      {{{"crt", other.admin.cert_pem}}, "contexts.lab: crt: the certificate does not belong to key"},
      // Readable and matching, but another cluster's: the handshake says which half is wrong.
      {{{"ca", other.ca_pem}},
       "contexts.lab: ca: the certificate of the node at " + cp + ":50000 is not signed by it"},
      {{{"crt", other.admin.cert_pem}, {"key", sim::TalosKeyPem(other.admin.key_pem)}},
       "contexts.lab: crt: the node at " + cp +
           ":50000 closes the connection right after the "
           "TLS handshake: it refuses this client certificate"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expected);
    fs::create_directories(file.parent_path());
    fs::copy_file(dir_ / "sim/lab/talosconfig", file, fs::copy_options::overwrite_existing);
    for (const auto& [field, pem] : c.material) ReplaceMaterial(file, field, pem);
    PlanOptions options{dir_ / "repo", {}, PlanFormat::kText, dir_ / "creds", "", {}, {}, true};
    std::ostringstream out, err;
    EXPECT_EQ(RunPlan(options, Env::Default(), out, err), kExitBlocked) << err.str() << out.str();
    EXPECT_THAT(out.str(), HasSubstr("credentials lab: " + file.string() + ": " + c.expected));
    EXPECT_THAT(out.str(), ::testing::Not(HasSubstr("unreachable")));
  }
}

// The daemon on a talosconfig whose ca, or crt and key, are another cluster's: the cluster is
// Blocked with the file, the context and the field that does not fit, on the status branch and
// in the log, not "node lab is unreachable" (as before).
TEST_F(LivePlanTest, TheDaemonNamesAnotherClustersTalosconfigToo) {
  ASSERT_NO_FATAL_FAILURE(StartLab());
  const std::string cp = Address("lab");
  gitsource::testing::UpstreamRepo repo(dir_, "fleet");
  repo.Commit(
      {{"clusters/lab.yaml", Profile("lab", "lab", "1.12.0", {{"lab", cp, "controlplane"}})}},
      "lab");
  Stranger other;
  ASSERT_NO_FATAL_FAILURE(MakeStranger(&other));
  const fs::path file = dir_ / "creds/lab/talosconfig";
  fs::create_directories(file.parent_path());
  fs::copy_file(dir_ / "sim/lab/talosconfig", file);
  ReplaceMaterial(file, "ca", other.ca_pem);
  int log[2];  // the daemon's stdout and stderr, read here as it writes them
  ASSERT_EQ(::pipe2(log, O_CLOEXEC), 0);
  absl::StatusOr<gitsource::Subprocess> daemon = gitsource::Subprocess::Spawn(
      {{std::string(TR_BINARY_DIR) + "/reconciler/talos-reconciler", "run", "--repo",
        "file://" + repo.bare().string(), "--credentials-dir", (dir_ / "creds").string(),
        "--state-dir", (dir_ / "state").string(), "--listen", "127.0.0.1:0"},
       gitsource::testing::HermeticEnvironment(), -1, log[1], log[1], {}});
  ::close(log[1]);
  if (!daemon.ok()) ::close(log[0]);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string blocked = fmt::format(
      "step=record phase=Blocked message=\"cannot observe the nodes: credentials lab: {}: "
      "contexts.lab: ca: the certificate of the node at {}:50000 is not signed by it",
      file.string(), cp);
  std::string text;
  const bool recorded = ReadPipeUntil(log[0], text, std::chrono::seconds(30), [&](const auto& t) {
    return t.find(blocked) != std::string::npos;
  });
  daemon->Signal(SIGTERM);
  // The rest, until it exits and the pipe closes.
  (void)ReadPipeUntil(log[0], text, std::chrono::seconds(30), [](const auto&) { return false; });
  ::close(log[0]);
  const int status = daemon->Wait();
  EXPECT_TRUE(recorded) << text;
  EXPECT_THAT(text, ::testing::Not(HasSubstr("unreachable")));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << text;
  EXPECT_THAT(repo.GitBare({"show", "talos-reconciler/status:status/lab.yaml"}),
              HasSubstr("contexts.lab: ca: the certificate of the node at"));
}

// A pull request's profiles: planned against the fleet observed through the trusted profile,
// so the proposal's endpoints (here an address nothing listens on) are never dialled.
TEST_F(LivePlanTest, PreviewObservesThroughTheTrustedProfileOnly) {
  StartFleet(R"(
time_scale: 0.001
address_prefix: auto
clusters:
  - name: prev
    nodes:
      - {name: prev-cp, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
)");
  if (HasFatalFailure()) return;
  auto profile = [](const std::string& address, const std::string& talos) {
    return Profile("prev", "prev", talos, {{"prev-cp", address, "controlplane"}});
  };
  const std::string cp = Address("prev-cp");
  const std::vector<core::SourceFile> trusted{{"clusters/prev.yaml", profile(cp, "1.11.6")}};
  PlanPreview same = PreviewPlan(trusted, trusted, {dir_ / "sim", {}}, "", Env::Default());
  EXPECT_TRUE(same.changed.empty());
  EXPECT_TRUE(same.markdown.empty());

  const std::vector<core::SourceFile> proposed{
      {"clusters/prev.yaml", profile("127.0.0.99", "1.12.0")}};
  PlanPreview preview = PreviewPlan(proposed, trusted, {dir_ / "sim", {}}, "", Env::Default());
  EXPECT_EQ(preview.changed, std::vector<std::string>{"prev"});
  EXPECT_TRUE(preview.unobserved.empty()) << testing::PrintToString(preview.unobserved);
  EXPECT_EQ(preview.exit_code, kExitOk) << preview.markdown;
  EXPECT_THAT(preview.markdown, HasSubstr("1.12.0"));

  const std::vector<core::SourceFile> invalid{{"clusters/prev.yaml", "spec: [unclosed"}};
  PlanPreview broken = PreviewPlan(invalid, trusted, {dir_ / "sim", {}}, "", Env::Default());
  EXPECT_EQ(broken.exit_code, kExitInvalid);
  EXPECT_THAT(broken.markdown, HasSubstr("clusters/prev.yaml"));

  // A pin beyond the daemon's shards is invalid in the preview as it will be after the merge.
  const std::vector<core::SourceFile> pinned{
      {"clusters/prev.yaml", profile(cp, "1.12.0") + "  shard: 5\n"}};
  PlanPreview beyond =
      PreviewPlan(pinned, trusted, {dir_ / "sim", {}}, "", Env::Default(), true, 4);
  EXPECT_EQ(beyond.exit_code, kExitInvalid);
  EXPECT_THAT(beyond.markdown, HasSubstr("spec.shard: must be below the number of shards, 4"));
  EXPECT_EQ(PreviewPlan(pinned, trusted, {dir_ / "sim", {}}, "", Env::Default(), true, 8).exit_code,
            kExitOk);

  // A release the daemon's Image Factory marks broken blocks the plan to it, naming it.
  const std::vector<core::SourceFile> to_112{{"clusters/prev.yaml", profile(cp, "1.12.0")}};
  PlanPreview withdrawn = PreviewPlan(to_112, trusted, {dir_ / "sim", {}}, "", Env::Default(), true,
                                      0, nullptr, {*core::ParseTalosVersion("1.12.0")});
  EXPECT_EQ(withdrawn.exit_code, kExitBlocked);
  EXPECT_THAT(withdrawn.markdown, HasSubstr("Talos 1.12.0 is marked broken by the Image Factory"));
  EXPECT_EQ(PreviewPlan(to_112, trusted, {dir_ / "sim", {}}, "", Env::Default()).exit_code,
            kExitOk);

  // Only the clusters the change touches are observed: another cluster of the watched branch
  // (here one whose credentials do not exist, so observing it is an error) is never asked.
  std::vector<core::SourceFile> fleet = trusted;
  fleet.push_back({"clusters/other.yaml", Profile("other", "no-such-credentials", "1.11.6",
                                                  {{"other-cp", "127.0.0.1", "controlplane"}})});
  std::vector<core::SourceFile> one_changed = fleet;
  one_changed[0] = {"clusters/prev.yaml", profile(cp, "1.12.0")};
  PlanPreview touched = PreviewPlan(one_changed, fleet, {dir_ / "sim", {}}, "", Env::Default());
  EXPECT_EQ(touched.changed, std::vector<std::string>{"prev"});
  EXPECT_EQ(touched.exit_code, kExitOk) << touched.markdown;
  EXPECT_TRUE(touched.unobserved.empty()) << touched.unobserved.front();
}

}  // namespace
}  // namespace tr::reconciler
