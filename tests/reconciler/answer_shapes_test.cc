// Answers of the wrong shape from the Kubernetes API, Prometheus and the Lease API decode to
// "not there" or a reported error, never an exception: before, a field of another type (a
// Prometheus `data` that is a number, a node's `metadata` that is a string) threw from
// nlohmann's json::value() and ended the daemon. Found while writing kube_answer_fuzz.
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"
#include "reconciler/clients/kube/kube_json.h"
#include "reconciler/features/k8s_job/upgrade_job.h"
#include "reconciler/features/lease/lease_client.h"
#include "reconciler/operations/gates/probes.h"

namespace tr::reconciler {
namespace {

using nlohmann::json;

TEST(KubeAnswerShapeTest, NodesOfTheRightShapeDecode) {
  const std::vector<kube::KubeNode> nodes = kube::NodesFromList(json::parse(R"({"items":[
    {"metadata":{"name":"w-1"},"spec":{"unschedulable":true},
     "status":{"conditions":[{"type":"Ready","status":"True"}],
               "addresses":[{"address":"10.5.0.2"}],"nodeInfo":{"kubeletVersion":"v1.34.1"}}}]})"));
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].name, "w-1");
  EXPECT_TRUE(nodes[0].unschedulable);
  EXPECT_TRUE(nodes[0].ready);
  EXPECT_EQ(nodes[0].addresses, std::vector<std::string>{"10.5.0.2"});
  EXPECT_EQ(nodes[0].kubelet_version, "v1.34.1");
}

TEST(KubeAnswerShapeTest, FieldsOfAnotherTypeCountAsMissing) {
  const std::vector<kube::KubeNode> nodes = kube::NodesFromList(json::parse(R"({"items":[
    {"metadata":"w-1","spec":{"unschedulable":"yes"},
     "status":{"conditions":[7,{"type":"Ready","status":true}],"addresses":"10.5.0.2",
               "nodeInfo":{"kubeletVersion":1.34}}},
    5]})"));
  ASSERT_EQ(nodes.size(), 2u);
  for (const kube::KubeNode& node : nodes) {
    EXPECT_EQ(node.name, "");
    EXPECT_FALSE(node.unschedulable);
    EXPECT_FALSE(node.ready);
    EXPECT_TRUE(node.addresses.empty());
    EXPECT_EQ(node.kubelet_version, "");
  }
  EXPECT_TRUE(kube::NodesFromList(json::parse(R"({"items":{"a":1}})")).empty());
  EXPECT_TRUE(kube::PodsFromList(json::parse("[1,2]")).empty());
  EXPECT_EQ(kube::ItemCount(json::parse(R"({"items":"many"})")), 0u);
}

TEST(KubeAnswerShapeTest, PodsAndWorkloadsOfAnotherShapeDecodeToDefaults) {
  const std::vector<kube::KubePodDetail> pods = kube::PodDetailsFromList(json::parse(
      R"({"items":[{"metadata":{"annotations":[1],"ownerReferences":{"kind":"x"}},
                    "spec":{"containers":[3]},"status":"Running"}]})"));
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].image, "");
  EXPECT_FALSE(pods[0].pod.mirror);
  EXPECT_EQ(pods[0].pod.owner_kind, "");

  const core::WorkloadStatus deployment = kube::WorkloadFromJson(
      "Deployment", json::parse(R"({"metadata":{"name":"web","generation":"4"},
                                     "spec":{"replicas":2.5},"status":{"replicas":3}})"));
  EXPECT_EQ(deployment.name, "web");
  EXPECT_EQ(deployment.generation, 0);
  EXPECT_EQ(deployment.desired, 1);  // the API's default when spec.replicas is not a number
  EXPECT_EQ(deployment.current, 3);
}

TEST(KubeAnswerShapeTest, AnErrorStatusGivesItsMessageAndReasonOnlyWhenTheyAreText) {
  const kube::ApiError error = kube::ApiErrorFromBody(
      R"({"kind":"Status","message":"jobs \"x\" already exists","reason":"AlreadyExists"})");
  EXPECT_EQ(error.message, "jobs \"x\" already exists");
  EXPECT_EQ(error.reason, "AlreadyExists");
  const kube::ApiError odd = kube::ApiErrorFromBody(R"({"message":["a"],"reason":409})");
  EXPECT_EQ(odd.message, "");
  EXPECT_EQ(odd.reason, "");
  EXPECT_EQ(kube::ApiErrorFromBody("<html>bad gateway</html>").message, "");
}

TEST(KubeAnswerShapeTest, AnEvictionRefusalNamesTheBudgetFromItsCauses) {
  const kube::ApiError refused = kube::ApiErrorFromBody(R"({"kind":"Status","code":429,
      "message":"Cannot evict pod as it would violate the pod's disruption budget.",
      "reason":"TooManyRequests","details":{"causes":[{"reason":"DisruptionBudget",
      "message":"The disruption budget web needs 2 healthy pods and has 2 currently"}]}})");
  EXPECT_EQ(refused.message,
            "Cannot evict pod as it would violate the pod's disruption budget. (The disruption "
            "budget web needs 2 healthy pods and has 2 currently)");
  EXPECT_EQ(refused.reason, "TooManyRequests");
}

TEST(PrometheusAnswerShapeTest, AnAnswerOfAnotherShapeIsUnhealthyWithTheReason) {
  const gates::ProbeAnswer good = gates::PrometheusVerdict(
      200, R"({"status":"success","data":{"resultType":"vector","result":[{"value":[1,"0"]}]}})",
      0.0);
  EXPECT_TRUE(good.healthy) << good.message;

  const gates::ProbeAnswer number_data =
      gates::PrometheusVerdict(200, R"({"status":"success","data":1})", std::nullopt);
  EXPECT_FALSE(number_data.healthy);
  EXPECT_EQ(number_data.message, "result type \"\", expected a scalar or a vector");

  const gates::ProbeAnswer odd_status =
      gates::PrometheusVerdict(500, R"({"status":1,"errorType":["x"],"error":{}})", std::nullopt);
  EXPECT_FALSE(odd_status.healthy);
  EXPECT_EQ(odd_status.message, "query error (): ");

  const gates::ProbeAnswer odd_sample = gates::PrometheusVerdict(
      200, R"({"status":"success","data":{"resultType":"vector","result":["x"]}})", std::nullopt);
  EXPECT_FALSE(odd_sample.healthy);
  EXPECT_EQ(odd_sample.message, "malformed sample");
}

TEST(UpgradeJobAnswerShapeTest, AJobOfAnotherShapeReadsAsRunningWithoutThrowing) {
  const absl::StatusOr<k8s_job::JobReading> reading = k8s_job::ReadUpgradeJob(
      R"({"metadata":{"name":7,"labels":"x"},"status":{"failed":"1","conditions":{"type":"Failed"}}})",
      R"({"items":[{"status":{"containerStatuses":[{"name":"upgrade-k8s","state":"terminated"}]}}]})");
  ASSERT_TRUE(reading.ok()) << reading.status();
  EXPECT_EQ(reading->task.state, k8s_upgrade::UpgradeTaskStatus::State::kRunning);
  EXPECT_EQ(reading->task.progress, "Job  running, attempt 1");
  EXPECT_EQ(reading->running_pod, "");
}

TEST(LeaseAnswerShapeTest, ALeaseOfAnotherShapeOrAnEndlessDurationIsAnError) {
  const absl::StatusOr<lease::LeaseRecord> odd = lease::ParseLease(
      R"({"metadata":{"resourceVersion":7,"labels":[1]},"spec":{"holderIdentity":3}})", "l");
  ASSERT_TRUE(odd.ok()) << odd.status();
  EXPECT_EQ(odd->resource_version, "");
  EXPECT_EQ(odd->holder, "");
  EXPECT_EQ(odd->duration, std::chrono::seconds(15));  // the default when there is none

  const absl::StatusOr<lease::LeaseRecord> endless = lease::ParseLease(
      R"({"metadata":{},"spec":{"leaseDurationSeconds":9223372036854775807}})", "l");
  EXPECT_EQ(endless.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(endless.status().message().find("leaseDurationSeconds"), std::string_view::npos)
      << endless.status();
}

}  // namespace
}  // namespace tr::reconciler
