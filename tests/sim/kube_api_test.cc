// The fake Kubernetes API with a real HTTPS client (cpp-httplib, certificate verified against
// the kubeconfig's CA) and with kubectl.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>

#include "nlohmann/json.hpp"
#include "tests/sim/fleet.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr const char* kKubeFleet = R"(
time_scale: 0.002
clusters:
  - name: lab
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: w-1, role: worker, talos: v1.11.6, kubernetes: 1.33.5}
      - {name: w-2, role: worker, talos: v1.11.6, kubernetes: 1.33.5}
    pods:
      - {name: web-a, node: w-1, labels: {app: web}}
      - {name: web-b, node: w-2, labels: {app: web}}
    pdbs:
      - {name: web, selector: {app: web}, min_available: 2}
)";

class KubeApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sim-kube-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto fleet = Fleet::Start(*FleetSpec::Parse(kKubeFleet), dir_);
    ASSERT_TRUE(fleet.ok()) << fleet.status();
    fleet_ = std::move(*fleet);
    access_ = *fleet_->Cluster("lab");
    YAML::Node kubeconfig = YAML::LoadFile(access_.kubeconfig.string());
    token_ = kubeconfig["users"][0]["user"]["token"].as<std::string>();
    ca_file_ = dir_ / "kube-ca.pem";
    std::ofstream(ca_file_) << access_.kube_ca_pem;
    const std::string host = access_.control_plane_addresses.front();
    client_ = std::make_unique<httplib::SSLClient>(host, 6443);
    client_->set_ca_cert_path(ca_file_.c_str());
    client_->enable_server_certificate_verification(true);
    client_->set_bearer_token_auth(token_.c_str());
  }
  void TearDown() override {
    fleet_.reset();
    std::filesystem::remove_all(dir_);
  }
  json Get(const std::string& path, int expect = 200) {
    auto res = client_->Get(path.c_str());
    EXPECT_TRUE(res) << httplib::to_string(res.error());
    if (!res) return {};
    EXPECT_EQ(res->status, expect) << path << ": " << res->body;
    return json::parse(res->body);
  }
  // Runs kubectl against the simulator; returns exit code and output.
  std::pair<int, std::string> Kubectl(const std::string& args) {
    const std::string cmd = "HOME=" + (dir_ / "home").string() + " kubectl --kubeconfig " +
                            access_.kubeconfig.string() + " --request-timeout=20s " + args +
                            " 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string out;
    std::array<char, 512> buf{};
    while (pipe != nullptr && fgets(buf.data(), buf.size(), pipe) != nullptr) out += buf.data();
    const int rc = pipe == nullptr ? -1 : pclose(pipe);
    return {WEXITSTATUS(rc), out};
  }

  std::filesystem::path dir_, ca_file_;
  std::unique_ptr<Fleet> fleet_;
  ClusterAccess access_;
  std::string token_;
  std::unique_ptr<httplib::SSLClient> client_;
};

TEST_F(KubeApiTest, RequiresTheBearerToken) {
  httplib::SSLClient anonymous(access_.control_plane_addresses.front(), 6443);
  anonymous.enable_server_certificate_verification(false);
  auto res = anonymous.Get("/api/v1/nodes");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_EQ(json::parse(res->body)["reason"], "Unauthorized");
}

TEST_F(KubeApiTest, VersionAndNodesReflectTheMachines) {
  EXPECT_EQ(Get("/version")["gitVersion"], "v1.34.1");
  json nodes = Get("/api/v1/nodes");
  ASSERT_EQ(nodes["items"].size(), 3u);
  json w1 = Get("/api/v1/nodes/w-1");
  EXPECT_EQ(w1["status"]["nodeInfo"]["kubeletVersion"], "v1.33.5");
  EXPECT_EQ(w1["status"]["nodeInfo"]["osImage"], "Talos (v1.11.6)");
  EXPECT_EQ(w1["status"]["conditions"][0]["type"], "Ready");
  EXPECT_EQ(w1["status"]["conditions"][0]["status"], "True");
  EXPECT_EQ(w1["status"]["addresses"][0]["address"], *fleet_->NodeAddress("w-1"));
  Get("/api/v1/nodes/nope", 404);
  json cps = Get("/api/v1/nodes?labelSelector=node-role.kubernetes.io/control-plane");
  ASSERT_EQ(cps["items"].size(), 1u);
  EXPECT_EQ(cps["items"][0]["metadata"]["name"], "cp-1");
  // Rebooting the machine makes the node NotReady (status Unknown) until it is back.
  ASSERT_TRUE(
      fleet_
          ->InjectFault("w-1",
                        {.kind = FaultKind::kNeverReturns, .count = 1, .delay = {}, .image = {}})
          .ok());
  ASSERT_TRUE(fleet_->ClearFaults("w-1").ok());
}

TEST_F(KubeApiTest, CordonWithEveryPatchType) {
  for (const auto& [type, body] : std::vector<std::pair<std::string, std::string>>{
           {"application/strategic-merge-patch+json", R"({"spec":{"unschedulable":true}})"},
           {"application/merge-patch+json", R"({"spec":{"unschedulable":false}})"},
           {"application/json-patch+json",
            R"([{"op":"add","path":"/spec/unschedulable","value":true}])"}}) {
    auto res = client_->Patch("/api/v1/nodes/w-2", body, type.c_str());
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
  }
  EXPECT_TRUE(fleet_->Node("w-2")->unschedulable);
  EXPECT_EQ(Get("/api/v1/nodes/w-2")["spec"]["unschedulable"], true);
  auto bad = client_->Patch("/api/v1/nodes/w-2", "{}", "text/plain");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 415);
}

// docs/talos-api.md §13: a merge patch's null deletes a key and the keys it does not name stay;
// the Node object, not the machine, holds them, so a power cycle keeps them.
TEST_F(KubeApiTest, NodeLabelsAndAnnotationsFollowMergePatchesAndOutliveAPowerCycle) {
  auto patch = [&](const json& body) {
    auto res = client_->Patch("/api/v1/nodes/w-1", body.dump(), "application/merge-patch+json");
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200) << res->body;
  };
  const json labels_before = Get("/api/v1/nodes/w-1")["metadata"]["labels"];
  ASSERT_NO_FATAL_FAILURE(patch({{"metadata",
                                  {{"labels", {{"pending", "true"}}},
                                   {"annotations", {{"mark", "v1.12.0"}, {"note", "kept"}}}}}}));
  json w1 = Get("/api/v1/nodes/w-1");
  EXPECT_EQ(w1["metadata"]["labels"]["pending"], "true");
  EXPECT_EQ(w1["metadata"]["labels"]["kubernetes.io/hostname"], "w-1");
  EXPECT_EQ(w1["metadata"]["annotations"], json({{"mark", "v1.12.0"}, {"note", "kept"}}));
  json selected = Get("/api/v1/nodes?labelSelector=pending%3Dtrue");
  ASSERT_EQ(selected["items"].size(), 1u);
  EXPECT_EQ(selected["items"][0]["metadata"]["name"], "w-1");

  const int boots = fleet_->Node("w-1")->boots;
  ASSERT_TRUE(
      fleet_
          ->InjectFault("w-1",
                        {.kind = FaultKind::kPowerCycle, .count = 1, .delay = {}, .image = {}})
          .ok());
  ASSERT_TRUE(fleet_
                  ->WaitForNode(
                      "w-1",
                      [boots](const NodeSnapshot& n) {
                        return n.boots == boots + 1 && n.stage == MachineStage::kRunning &&
                               n.ready;
                      },
                      20s)
                  .ok());
  w1 = Get("/api/v1/nodes/w-1");
  EXPECT_EQ(w1["metadata"]["labels"]["pending"], "true");
  EXPECT_EQ(w1["metadata"]["annotations"], json({{"mark", "v1.12.0"}, {"note", "kept"}}));

  // null deletes, also of a key that is not there; the rest stays.
  ASSERT_NO_FATAL_FAILURE(patch({{"metadata",
                                  {{"labels", {{"pending", nullptr}}},
                                   {"annotations", {{"mark", nullptr}, {"absent", nullptr}}}}}}));
  w1 = Get("/api/v1/nodes/w-1");
  EXPECT_EQ(w1["metadata"]["labels"], labels_before);
  EXPECT_EQ(w1["metadata"]["annotations"], json({{"note", "kept"}}));
  EXPECT_TRUE(Get("/api/v1/nodes?labelSelector=pending%3Dtrue")["items"].empty());
}

TEST_F(KubeApiTest, EvictionHonoursDisruptionBudgets) {
  json kube_system =
      Get("/api/v1/namespaces/kube-system/pods?labelSelector=k8s-app%3Dkube-apiserver");
  ASSERT_EQ(kube_system["items"].size(), 1u);
  EXPECT_EQ(kube_system["items"][0]["spec"]["containers"][0]["image"],
            "registry.k8s.io/kube-apiserver:v1.34.1");
  json on_w1 = Get("/api/v1/pods?fieldSelector=spec.nodeName%3Dw-1");
  ASSERT_EQ(on_w1["items"].size(), 2u);  // web-a and kube-proxy
  auto res = client_->Post("/api/v1/namespaces/default/pods/web-a/eviction",
                           R"({"apiVersion":"policy/v1","kind":"Eviction",)"
                           R"("metadata":{"name":"web-a","namespace":"default"}})",
                           "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
  json status = json::parse(res->body);
  EXPECT_EQ(status["reason"], "TooManyRequests");
  EXPECT_EQ(status["message"], "Cannot evict pod as it would violate the pod's disruption budget.");
  EXPECT_EQ(status["details"]["causes"][0]["reason"], "DisruptionBudget");
  EXPECT_THAT(status["details"]["causes"][0]["message"].get<std::string>(),
              HasSubstr("The disruption budget web needs 2 healthy pods and has 2 currently"));
  json pdbs = Get("/apis/policy/v1/namespaces/default/poddisruptionbudgets");
  EXPECT_EQ(pdbs["items"][0]["status"]["disruptionsAllowed"], 0);
  Get("/api/v1/namespaces/default/pods/nope", 404);
}

// What `kubectl drain --disable-eviction` (and policy.drain.onTimeout: force) does: a plain
// DELETE, which no budget is asked about, journaled apart from an eviction.
TEST_F(KubeApiTest, DeletingAPodPassesItsBudgetAndIsJournaledAsADelete) {
  auto res = client_->Delete("/api/v1/namespaces/default/pods/web-a",
                             R"({"apiVersion":"v1","kind":"DeleteOptions"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(json::parse(res->body)["metadata"]["name"], "web-a");
  Get("/api/v1/namespaces/default/pods/web-a", 404);
  int deletes = 0, evictions = 0;
  for (const JournalEntry& e : fleet_->journal().Entries()) {
    if (e.kind != JournalEntry::Kind::kState) continue;
    deletes += e.what == "delete" && e.node == "w-1" && e.detail == "default/web-a";
    evictions += e.what == "evict";
  }
  EXPECT_EQ(deletes, 1);
  EXPECT_EQ(evictions, 0);
  auto again = client_->Delete("/api/v1/namespaces/default/pods/web-a");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 404);
}

TEST_F(KubeApiTest, LeasesSupportOptimisticConcurrency) {
  const std::string base = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
  auto created =
      client_->Post(base.c_str(), R"({"metadata":{"name":"lock"},"spec":{"holderIdentity":"a"}})",
                    "application/json");
  ASSERT_TRUE(created);
  ASSERT_EQ(created->status, 201);
  json lease = json::parse(created->body);
  lease["spec"]["holderIdentity"] = "b";
  auto updated = client_->Put((base + "/lock").c_str(), lease.dump(), "application/json");
  ASSERT_TRUE(updated);
  EXPECT_EQ(updated->status, 200);
  auto stale = client_->Put((base + "/lock").c_str(), lease.dump(), "application/json");
  ASSERT_TRUE(stale);
  EXPECT_EQ(stale->status, 409);
  EXPECT_EQ(Get(base + "/lock")["spec"]["holderIdentity"], "b");
  json node_leases = Get("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases");
  EXPECT_EQ(node_leases["items"].size(), 3u);
}

// The answers a leader elector depends on, with the Status bodies the API server sends.
TEST_F(KubeApiTest, LeasesAnswerConflictsAndMissingObjectsAsTheApiServerDoes) {
  const std::string base = "/apis/coordination.k8s.io/v1/namespaces/ops/leases";
  const json lease = {{"metadata", {{"name", "talos-reconciler"}}},
                      {"spec",
                       {{"holderIdentity", "pod-a"},
                        {"leaseDurationSeconds", 15},
                        {"acquireTime", "2026-11-23T10:00:00.123456Z"},
                        {"renewTime", "2026-11-23T10:00:00.123456Z"},
                        {"leaseTransitions", 0}}}};
  auto send = [&](const char* method, const std::string& path, const json& body) {
    auto res = std::string(method) == "POST"
                   ? client_->Post(path.c_str(), body.dump(), "application/json")
                   : client_->Put(path.c_str(), body.dump(), "application/json");
    EXPECT_TRUE(res);
    return res ? std::pair{res->status, json::parse(res->body)} : std::pair{0, json{}};
  };
  auto missing = send("PUT", base + "/talos-reconciler", lease);
  EXPECT_EQ(missing.first, 404);
  EXPECT_EQ(missing.second["reason"], "NotFound");
  EXPECT_EQ(missing.second["kind"], "Status");
  auto [code, created] = send("POST", base, lease);
  ASSERT_EQ(code, 201);
  EXPECT_EQ(created["metadata"]["namespace"], "ops");
  EXPECT_FALSE(created["metadata"]["uid"].get<std::string>().empty());
  EXPECT_EQ(created["spec"]["renewTime"], "2026-11-23T10:00:00.123456Z");
  auto again = send("POST", base, lease);
  EXPECT_EQ(again.first, 409);
  EXPECT_EQ(again.second["reason"], "AlreadyExists");

  json renewed = created;
  renewed["spec"]["renewTime"] = "2026-11-23T10:00:02.000001Z";
  auto [renew_code, after] = send("PUT", base + "/talos-reconciler", renewed);
  ASSERT_EQ(renew_code, 200);
  EXPECT_NE(after["metadata"]["resourceVersion"], created["metadata"]["resourceVersion"]);
  EXPECT_EQ(after["metadata"]["uid"], created["metadata"]["uid"]);
  // A second writer still holding the first version loses.
  json stale = created;
  stale["spec"]["holderIdentity"] = "pod-b";
  auto conflict = send("PUT", base + "/talos-reconciler", stale);
  EXPECT_EQ(conflict.first, 409);
  EXPECT_EQ(conflict.second["reason"], "Conflict");
  json unversioned = after;
  unversioned["metadata"].erase("resourceVersion");
  EXPECT_EQ(send("PUT", base + "/talos-reconciler", unversioned).first, 409);
  json renamed = after;
  renamed["metadata"]["name"] = "other";
  EXPECT_EQ(send("PUT", base + "/talos-reconciler", renamed).second["reason"], "BadRequest");
  json zero = after;
  zero["spec"]["leaseDurationSeconds"] = 0;
  auto invalid = send("PUT", base + "/talos-reconciler", zero);
  EXPECT_EQ(invalid.first, 422);
  EXPECT_EQ(invalid.second["reason"], "Invalid");
  EXPECT_EQ(Get(base + "/talos-reconciler")["spec"]["holderIdentity"], "pod-a");
  EXPECT_EQ(Get(base + "/nope", 404)["reason"], "NotFound");
  EXPECT_EQ(Get(base)["items"].size(), 1u);
}

// Membership Leases are found by label; a replace without the labels drops them (PUT replaces
// the whole object); the list's resourceVersion is the newest, and reading does not move it.
TEST_F(KubeApiTest, LeasesAreListedByLabelSelector) {
  const std::string base = "/apis/coordination.k8s.io/v1/namespaces/ops/leases";
  auto create = [&](const std::string& name, const json& labels) {
    json lease = {{"metadata", {{"name", name}}}, {"spec", {{"holderIdentity", name}}}};
    if (!labels.is_null()) lease["metadata"]["labels"] = labels;
    auto res = client_->Post(base.c_str(), lease.dump(), "application/json");
    EXPECT_TRUE(res && res->status == 201);
    return res ? json::parse(res->body) : json{};
  };
  create("tr-member-a", {{"talos-reconciler/election", "tr"}});
  const json b = create("tr-member-b", {{"talos-reconciler/election", "tr"}, {"zone", "x"}});
  create("tr-shard-0", nullptr);
  create("other-member-c", {{"talos-reconciler/election", "other"}});
  auto names = [&](const std::string& selector) {
    json list = Get(base + "?labelSelector=" + selector);
    std::vector<std::string> out;
    for (const json& item : list["items"]) out.push_back(item["metadata"]["name"]);
    return out;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(names("talos-reconciler%2Felection%3Dtr"), (Names{"tr-member-a", "tr-member-b"}));
  EXPECT_EQ(names("talos-reconciler%2Felection%3Dtr%2Czone%21%3Dx"), Names{"tr-member-a"});
  EXPECT_EQ(names("zone"), Names{"tr-member-b"});
  EXPECT_EQ(names("").size(), 4u);
  const json list = Get(base);
  EXPECT_EQ(list["metadata"]["resourceVersion"], Get(base)["metadata"]["resourceVersion"]);
  EXPECT_GE(std::stoull(list["metadata"]["resourceVersion"].get<std::string>()),
            std::stoull(b["metadata"]["resourceVersion"].get<std::string>()));
  json unlabelled = b;
  unlabelled["metadata"].erase("labels");
  auto res = client_->Put((base + "/tr-member-b").c_str(), unlabelled.dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(names("talos-reconciler%2Felection%3Dtr"), Names{"tr-member-a"});
}

TEST_F(KubeApiTest, KubectlGetNodesWorks) {
  auto [rc, out] = Kubectl("get nodes");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("NAME"));
  EXPECT_THAT(out, HasSubstr("cp-1"));
  EXPECT_THAT(out, HasSubstr("control-plane"));
  EXPECT_THAT(out, HasSubstr("v1.33.5"));
  auto [cordon_rc, cordon_out] = Kubectl("cordon w-1");
  ASSERT_EQ(cordon_rc, 0) << cordon_out;
  EXPECT_TRUE(fleet_->Node("w-1")->unschedulable);
  auto [after_rc, after] = Kubectl("get node w-1");
  EXPECT_EQ(after_rc, 0);
  EXPECT_THAT(after, HasSubstr("SchedulingDisabled"));
}

// managedFields as the API server keeps them for a forced server-side apply: the applier owns
// what it sets, the manager that created the object keeps only the rest.
TEST_F(KubeApiTest, ServerSideApplyTakesTheFieldsItSets) {
  const std::string path = "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy";
  json before = Get(path);
  ASSERT_EQ(before["metadata"]["managedFields"].size(), 1u);
  EXPECT_EQ(before["metadata"]["managedFields"][0]["manager"], "talos");
  EXPECT_EQ(before["metadata"]["managedFields"][0]["operation"], "Update");
  EXPECT_EQ(before["status"]["desiredNumberScheduled"], 3);
  EXPECT_EQ(before["status"]["numberReady"], 3);
  // cp-1 runs 1.34.1, the workers 1.33.5: one pod runs the DaemonSet's image.
  EXPECT_EQ(before["status"]["updatedNumberScheduled"], 1);
  const std::string body =
      "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: kube-proxy\n  namespace: "
      "kube-system\n  annotations: {config.k8s.io/owning-inventory: inv}\nspec:\n  template:\n"
      "    spec:\n      containers: [{name: kube-proxy, image: " +
      before["spec"]["template"]["spec"]["containers"][0]["image"].get<std::string>() + "}]\n";
  auto res = client_->Patch((path + "?fieldManager=x&force=true").c_str(), body,
                            "application/apply-patch+yaml");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json after = Get(path);
  EXPECT_EQ(after["metadata"]["annotations"]["config.k8s.io/owning-inventory"], "inv");
  EXPECT_EQ(after["metadata"]["generation"], 1);  // the same image: nothing rolls out
  std::map<std::string, json> fields;
  for (const json& e : after["metadata"]["managedFields"]) {
    fields[e["manager"].get<std::string>() + "/" + e["operation"].get<std::string>()] =
        e["fieldsV1"];
  }
  ASSERT_EQ(fields.size(), 2u) << after.dump();
  EXPECT_TRUE(fields["x/Apply"]["f:spec"]["f:template"]["f:spec"].contains("f:containers"));
  EXPECT_FALSE(fields["talos/Update"]["f:spec"]["f:template"].contains("f:spec"));
  EXPECT_TRUE(fields["talos/Update"]["f:spec"].contains("f:selector"));
}

// Talos's inventory ConfigMap: created once, replaced with the resourceVersion read.
TEST_F(KubeApiTest, InventoryConfigMapIsCreatedAndReplaced) {
  const std::string path =
      "/api/v1/namespaces/kube-system/configmaps/talos-bootstrap-manifests-inventory";
  Get(path, 404);
  const json created = {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", "talos-bootstrap-manifests-inventory"}, {"namespace", "kube-system"}}}};
  auto res = client_->Post("/api/v1/namespaces/kube-system/configmaps", created.dump(),
                           "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 201) << res->body;
  const std::string version = json::parse(res->body)["metadata"]["resourceVersion"];
  auto again = client_->Post("/api/v1/namespaces/kube-system/configmaps", created.dump(),
                             "application/json");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 409);
  json update = created;
  update["data"] = {{"kube-system_kube-proxy_apps_DaemonSet", ""}};
  update["metadata"]["resourceVersion"] = version;
  auto put = client_->Put(path, update.dump(), "application/json");
  ASSERT_TRUE(put);
  ASSERT_EQ(put->status, 200) << put->body;
  EXPECT_EQ(Get(path)["data"], update["data"]);
  auto stale = client_->Put(path, update.dump(), "application/json");  // the old version
  ASSERT_TRUE(stale);
  EXPECT_EQ(stale->status, 409) << stale->body;
}

// A DELETE of the kube-proxy DaemonSet takes its pods with it (propagation Background).
TEST_F(KubeApiTest, DeletedDaemonSetTakesItsPods) {
  const std::string path = "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy";
  auto res = client_->Delete(path.c_str());
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  Get(path, 404);
  const json pods = Get("/api/v1/namespaces/kube-system/pods");  // kept: the loop reads into it
  for (const json& pod : pods["items"]) {
    EXPECT_FALSE(pod["metadata"]["name"].get<std::string>().starts_with("kube-proxy"));
  }
  auto twice = client_->Delete(path.c_str());
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->status, 404);
}

TEST_F(KubeApiTest, KubeconfigComesFromTheSimulatorWithoutLeakingElsewhere) {
  YAML::Node kubeconfig = YAML::LoadFile(access_.kubeconfig.string());
  EXPECT_EQ(kubeconfig["clusters"][0]["cluster"]["server"].as<std::string>(), access_.kube_api_url);
  // The token is only in the kubeconfig, never in the journal or the ready file.
  std::ifstream journal(dir_ / "journal.jsonl"), ready(dir_ / "ready.json");
  std::string text((std::istreambuf_iterator<char>(journal)), {});
  text.append(std::istreambuf_iterator<char>(ready), {});
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.find(token_), std::string::npos);
}

}  // namespace
}  // namespace tr::sim
