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
