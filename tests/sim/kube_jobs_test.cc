// batch/v1 Jobs and their pods on the fake Kubernetes API, with a real HTTPS client: what the
// API server sets on create, 409 AlreadyExists, validation, the status subresources, list by
// label, and delete with and without propagation to the pods.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <fstream>

#include "nlohmann/json.hpp"
#include "tests/sim/fleet.h"
#include "tests/sim/api/kube_jobs.h"
#include "yaml-cpp/yaml.h"

namespace tr::sim {
namespace {

using nlohmann::json;

constexpr const char* kFleet = R"(
time_scale: 0.002
clusters:
  - name: home
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.12.0, kubernetes: 1.34.1}
)";
constexpr char kJobs[] = "/apis/batch/v1/namespaces/ops/jobs";
constexpr char kPods[] = "/api/v1/namespaces/ops/pods";

class KubeJobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sim-jobs-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto fleet = Fleet::Start(*FleetSpec::Parse(kFleet), dir_);
    ASSERT_TRUE(fleet.ok()) << fleet.status();
    fleet_ = std::move(*fleet);
    const ClusterAccess access = *fleet_->Cluster("home");
    const std::filesystem::path ca = dir_ / "kube-ca.pem";
    std::ofstream(ca) << access.kube_ca_pem;
    client_ = std::make_unique<httplib::SSLClient>(access.control_plane_addresses.front(), 6443);
    client_->set_ca_cert_path(ca.c_str());
    client_->enable_server_certificate_verification(true);
    token_ =
        YAML::LoadFile(access.kubeconfig.string())["users"][0]["user"]["token"].as<std::string>();
    client_->set_bearer_token_auth(token_.c_str());
  }
  void TearDown() override {
    fleet_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::pair<int, json> Send(const std::string& method, const std::string& path,
                            const json& body = nullptr) {
    httplib::Result res =
        method == "POST"  ? client_->Post(path.c_str(), body.dump(), "application/json")
        : method == "PUT" ? client_->Put(path.c_str(), body.dump(), "application/json")
        : method == "DELETE"
            ? client_->Delete(path.c_str(), body.is_null() ? "" : body.dump(), "application/json")
            : client_->Get(path.c_str());
    EXPECT_TRUE(res) << method << " " << path;
    if (!res) return {0, json{}};
    return {res->status, json::parse(res->body, nullptr, false)};
  }

  static json Job(const std::string& name, const std::string& restart = "Never") {
    return {
        {"metadata", {{"name", name}, {"labels", {{"app", "upgrade"}}}}},
        {"spec",
         {{"podFailurePolicy",
           {{"rules",
             {{{"action", "FailJob"},
               {"onExitCodes", {{"operator", "In"}, {"values", {1, 2, 3}}}}}}}}},
          {"template",
           {{"spec",
             {{"restartPolicy", restart}, {"containers", {{{"name", "c"}, {"image", "i"}}}}}}}}}}};
  }

  // A pod for `job` as the Job controller makes it.
  json PodFor(const json& job) {
    return {{"metadata",
             {{"generateName", job["metadata"]["name"].get<std::string>() + "-"},
              {"labels", job["spec"]["template"]["metadata"]["labels"]}}},
            {"spec", job["spec"]["template"]["spec"]}};
  }

  std::filesystem::path dir_;
  std::unique_ptr<Fleet> fleet_;
  std::unique_ptr<httplib::SSLClient> client_;
  std::string token_;
};

TEST_F(KubeJobsTest, CreateSetsWhatTheApiServerSetsAndRefusesClashesAndInvalidJobs) {
  auto [code, job] = Send("POST", kJobs, Job("upgrade"));
  ASSERT_EQ(code, 201) << job;
  const std::string uid = job["metadata"]["uid"];
  EXPECT_FALSE(uid.empty());
  EXPECT_FALSE(job["metadata"]["resourceVersion"].get<std::string>().empty());
  EXPECT_EQ(job["spec"]["backoffLimit"], 6);
  EXPECT_EQ(job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"], uid);
  EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"]["job-name"], "upgrade");
  EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"]["controller-uid"], uid);

  auto [again, clash] = Send("POST", kJobs, Job("upgrade"));
  EXPECT_EQ(again, 409);
  EXPECT_EQ(clash["reason"], "AlreadyExists");
  EXPECT_EQ(clash["message"], "jobs.batch \"upgrade\" already exists");
  auto [bad, invalid] = Send("POST", kJobs, Job("other", "OnFailure"));
  EXPECT_EQ(bad, 422);
  EXPECT_EQ(invalid["reason"], "Invalid");
  auto [missing, not_found] = Send("GET", std::string(kJobs) + "/nope");
  EXPECT_EQ(missing, 404);
  EXPECT_EQ(not_found["reason"], "NotFound");
  EXPECT_EQ(Send("GET", std::string(kJobs) + "?labelSelector=app%3Dupgrade").second["items"].size(),
            1u);
  EXPECT_EQ(Send("GET", std::string(kJobs) + "?labelSelector=app%3Dother").second["items"].size(),
            0u);
}

TEST_F(KubeJobsTest, StatusSubresourceChangesOnlyTheStatusWithOptimisticConcurrency) {
  const json job = Send("POST", kJobs, Job("upgrade")).second;
  json changed = job;
  changed["status"] = {{"active", 1}};
  changed["spec"]["backoffLimit"] = 0;  // ignored: only the status changes
  auto [code, after] = Send("PUT", std::string(kJobs) + "/upgrade/status", changed);
  ASSERT_EQ(code, 200) << after;
  EXPECT_EQ(after["status"]["active"], 1);
  EXPECT_EQ(after["spec"]["backoffLimit"], 6);
  EXPECT_NE(after["metadata"]["resourceVersion"], job["metadata"]["resourceVersion"]);
  auto [stale, conflict] = Send("PUT", std::string(kJobs) + "/upgrade/status", changed);
  EXPECT_EQ(stale, 409);
  EXPECT_EQ(conflict["reason"], "Conflict");
}

TEST_F(KubeJobsTest, DeleteOrphansPodsByDefaultAndTakesThemWithBackground) {
  const json orphaning = Send("POST", kJobs, Job("a")).second;
  auto [pod_code, pod] = Send("POST", kPods, PodFor(orphaning));
  ASSERT_EQ(pod_code, 201) << pod;
  const std::string pod_name = pod["metadata"]["name"];
  EXPECT_TRUE(pod_name.starts_with("a-") && pod_name.size() == 7) << pod_name;
  pod["status"] = {{"phase", "Failed"}};
  EXPECT_EQ(Send("PUT", std::string(kPods) + "/" + pod_name + "/status", pod).first, 200);
  EXPECT_EQ(Send("GET", std::string(kPods) + "/" + pod_name).second["status"]["phase"], "Failed");
  EXPECT_EQ(Send("GET", std::string(kPods) + "?labelSelector=job-name%3Da").second["items"].size(),
            1u);
  EXPECT_EQ(Send("DELETE", std::string(kJobs) + "/a").first, 200);
  EXPECT_EQ(Send("GET", std::string(kPods) + "/" + pod_name).first, 200);  // orphaned

  const json background = Send("POST", kJobs, Job("b")).second;
  const std::string b_pod = Send("POST", kPods, PodFor(background)).second["metadata"]["name"];
  EXPECT_EQ(Send("DELETE", std::string(kJobs) + "/b", {{"propagationPolicy", "Background"}}).first,
            200);
  EXPECT_EQ(Send("GET", std::string(kPods) + "/" + b_pod).first, 404);
  EXPECT_EQ(Send("GET", std::string(kJobs) + "/b").first, 404);
  EXPECT_EQ(Send("DELETE", std::string(kJobs) + "/b").first, 404);
}

TEST_F(KubeJobsTest, PodLogServesTheTailOfTheFileTheKubeletKeeps) {
  const json job = Send("POST", kJobs, Job("l")).second;
  json spec = PodFor(job);
  const std::filesystem::path log = dir_ / "l.log";
  spec["metadata"]["annotations"] = {{kLogFileAnnotation, log.string()}};
  auto [code, pod] = Send("POST", kPods, spec);
  ASSERT_EQ(code, 201) << pod;
  const std::string path = std::string(kPods) + "/" + pod["metadata"]["name"].get<std::string>();
  auto get = [&](const std::string& query) {
    httplib::Result res = client_->Get((path + "/log" + query).c_str());
    EXPECT_TRUE(res) << query;
    return res ? std::pair{res->status, res->body} : std::pair{0, std::string()};
  };
  // Not started yet: the API server says the container is waiting.
  EXPECT_EQ(get("?container=c").first, 400);
  pod["status"] = {{"phase", "Running"},
                   {"containerStatuses", {{{"name", "c"}, {"state", {{"running", json::object()}}}}}}};
  ASSERT_EQ(Send("PUT", path + "/status", pod).first, 200);
  std::ofstream(log) << "one\ntwo\nthree\n";
  EXPECT_EQ(get("?container=c&tailLines=2"), (std::pair<int, std::string>{200, "two\nthree\n"}));
  EXPECT_EQ(get(""), (std::pair<int, std::string>{200, "one\ntwo\nthree\n"}));  // the only one
  EXPECT_EQ(get("?container=other").first, 400);
  EXPECT_EQ(Send("GET", std::string(kPods) + "/missing/log?container=c").first, 404);
}

}  // namespace
}  // namespace tr::sim
