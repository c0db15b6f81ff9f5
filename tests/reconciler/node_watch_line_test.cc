// A line of a watch of Nodes, decoded as the API server writes it: the event types, an ERROR
// event's Status, and a line that is no event; nothing thrown on a field of another type.
#include <gtest/gtest.h>

#include "reconciler/clients/kube/kube_json.h"

namespace tr::reconciler::kube {
namespace {

using Type = NodeWatchEvent::Type;

TEST(NodeWatchLineTest, EventsCarryTheNodeAndItsVersion) {
  const NodeWatchLine line = NodeWatchLineFromJson(
      R"({"type":"MODIFIED","object":{"kind":"Node","metadata":{"name":"w-1",)"
      R"("resourceVersion":"1042"},"spec":{"unschedulable":true},"status":{"conditions":)"
      R"([{"type":"Ready","status":"True"}]}}})");
  ASSERT_TRUE(line.event.has_value());
  EXPECT_EQ(line.event->type, Type::kModified);
  EXPECT_EQ(line.event->node.name, "w-1");
  EXPECT_TRUE(line.event->node.unschedulable);
  EXPECT_TRUE(line.event->node.ready);
  EXPECT_EQ(line.event->resource_version, "1042");

  for (const auto& [text, type] :
       {std::pair{"ADDED", Type::kAdded}, std::pair{"DELETED", Type::kDeleted},
        std::pair{"BOOKMARK", Type::kBookmark}}) {
    const NodeWatchLine other =
        NodeWatchLineFromJson(std::string(R"({"type":")") + text +
                              R"(","object":{"kind":"Node","metadata":{"resourceVersion":"7"}}})");
    ASSERT_TRUE(other.event.has_value()) << text;
    EXPECT_EQ(other.event->type, type) << text;
    EXPECT_EQ(other.event->resource_version, "7") << text;
  }
}

// A kubelet's Node as a real API server sends it: the fields read come out the same with its
// other conditions, images, volumes and field owners around them.
TEST(NodeWatchLineTest, AKubeletsWholeNodeReadsAsItsFields) {
  std::string images;  // a kubelet reports up to 50
  for (int i = 0; i < 50; ++i) {
    images += (i ? "," : "") + std::string(R"({"names":["registry.k8s.io/app-)") +
              std::to_string(i) + R"(@sha256:0123","registry.k8s.io/app:v1"],"sizeBytes":1234})";
  }
  const NodeWatchLine line = NodeWatchLineFromJson(
      R"({"type":"MODIFIED","object":{"kind":"Node","metadata":{"name":"w-1",)"
      R"("resourceVersion":"1043","labels":{"node-role.kubernetes.io/control-plane":""},)"
      R"("annotations":{"talos.dev/owned-labels":"[]"},)"
      R"("managedFields":[{"manager":"kubelet","operation":"Update","fieldsType":"FieldsV1",)"
      R"("fieldsV1":{"f:status":{"f:images":{}}}}]},"spec":{"unschedulable":false},)"
      R"("status":{"conditions":[{"type":"MemoryPressure","status":"False"},)"
      R"({"type":"Ready","status":"True"}],"addresses":[{"type":"InternalIP",)"
      R"("address":"10.5.0.3"}],"nodeInfo":{"kubeletVersion":"v1.34.1"},)"
      R"("volumesInUse":["kubernetes.io/csi/x"],"volumesAttached":[{"name":"x","devicePath":""}],)"
      R"("images":[)" + images + R"(]}}})");
  ASSERT_TRUE(line.event.has_value());
  const KubeNode& node = line.event->node;
  EXPECT_EQ(node.name, "w-1");
  EXPECT_TRUE(node.control_plane);
  EXPECT_FALSE(node.unschedulable);
  EXPECT_TRUE(node.ready);
  EXPECT_EQ(node.internal_ip, "10.5.0.3");
  EXPECT_EQ(node.kubelet_version, "v1.34.1");
  EXPECT_EQ(line.event->resource_version, "1043");
}

TEST(NodeWatchLineTest, AnErrorEventIsItsStatus) {
  const NodeWatchLine line = NodeWatchLineFromJson(
      R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)"
      R"j("status":"Failure","message":"too old resource version: 5 (1200)",)j"
      R"("reason":"Expired","code":410}})");
  EXPECT_FALSE(line.event.has_value());
  EXPECT_EQ(line.error_code, 410);
  EXPECT_EQ(line.error_reason, "Expired");
  EXPECT_EQ(line.error_message, "too old resource version: 5 (1200)");
}

TEST(NodeWatchLineTest, ALineThatIsNoEventIsNamedAndNothingThrows) {
  for (const char* text : {"", "not json", "[]", R"({"type":5})", R"({"type":"ADDED","object":7})",
                           R"({"type":"ERROR","object":{"code":"410"}})"}) {
    const NodeWatchLine line = NodeWatchLineFromJson(text);
    if (line.event) {
      EXPECT_EQ(line.event->node.name, "") << text;  // an ADDED of no object: an empty Node
      continue;
    }
    EXPECT_EQ(line.error_code, 0) << text;
  }
  EXPECT_EQ(NodeWatchLineFromJson("not json").error_message, "not a watch event: not json");
}

}  // namespace
}  // namespace tr::reconciler::kube
