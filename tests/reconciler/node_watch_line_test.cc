// A line of a watch of Nodes, decoded as the API server writes it: the event types, an ERROR
// event's Status, and a line that is no event; nothing thrown on a field of another type.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/pending_mark.h"
#include "nlohmann/json.hpp"
#include "reconciler/clients/kube/kube_json.h"
#include "reconciler/runtime/json_fields.h"

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

// The line as a document, read with the decoders a list's Nodes go through: what
// NodeWatchLineFromJson, which builds no document, must agree with.
NodeWatchLine ReadAsDocument(const std::string& text) {
  using json_fields::Field;
  using json_fields::Text;
  const nlohmann::json line = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json& object = Field(line, "object");
  const std::string type = Text(line, "type");
  NodeWatchLine out;
  for (const auto& [name, kind] :
       {std::pair{"ADDED", Type::kAdded}, std::pair{"MODIFIED", Type::kModified},
        std::pair{"DELETED", Type::kDeleted}, std::pair{"BOOKMARK", Type::kBookmark}}) {
    if (type != name) continue;
    NodeWatchEvent event;
    event.type = kind;
    if (kind != Type::kBookmark) {
      event.node = NodesFromList(nlohmann::json{{"items", nlohmann::json::array({object})}})[0];
    }
    event.resource_version = Text(Field(object, "metadata"), "resourceVersion");
    out.event = event;
    return out;
  }
  out.error_code = static_cast<int>(json_fields::Integer(object, "code", 0));
  out.error_reason = Text(object, "reason");
  out.error_message = Text(object, "message");
  if (type != "ERROR" && out.error_message.empty()) {
    out.error_message = "not a watch event: " + text.substr(0, 120);
  }
  return out;
}

std::string Describe(const NodeWatchLine& line) {
  if (!line.event) {
    return "error " + std::to_string(line.error_code) + " " + line.error_reason + " / " +
           line.error_message;
  }
  const KubeNode& n = line.event->node;
  std::string addresses;
  for (const std::string& a : n.addresses) addresses += "[" + a + "]";
  return "event " + std::to_string(static_cast<int>(line.event->type)) + " version " +
         line.event->resource_version + " name " + n.name + " addresses " + addresses +
         " internal " + n.internal_ip + " cp " + std::to_string(n.control_plane) + " ready " +
         std::to_string(n.ready) + " cordoned " + std::to_string(n.unschedulable) + " kubelet " +
         n.kubelet_version + " pending " + n.pending_install.value_or("(none)");
}

// Watch lines of the Node's shape, each field now and then of another type, given twice, or
// missing, among fields nobody reads; some cut short.
class LineMaker {
 public:
  std::string Line() {
    std::string line = Object("line", 0);
    if (Chance(0.05)) line.resize(Pick(line.size()));
    return line;
  }

 private:
  struct Member {
    const char* key;
    const char* shape;
  };
  static std::vector<Member> MembersOf(const std::string& shape) {
    static const std::string pending(core::kPendingInstallAnnotation);
    if (shape == "line") return {{"type", "type"}, {"object", "node"}};
    if (shape == "node") {
      return {{"metadata", "meta"}, {"spec", "spec"},   {"status", "status"},
              {"code", "number"},   {"reason", "text"}, {"message", "text"}};
    }
    if (shape == "meta") {
      return {{"name", "text"},
              {"resourceVersion", "text"},
              {"labels", "labels"},
              {"annotations", "annotations"}};
    }
    if (shape == "labels") return {{"node-role.kubernetes.io/control-plane", "text"}};
    if (shape == "annotations") return {{pending.c_str(), "text"}};
    if (shape == "spec") return {{"unschedulable", "flag"}};
    if (shape == "status") {
      return {{"conditions", "conditions"}, {"addresses", "addresses"}, {"nodeInfo", "info"}};
    }
    if (shape == "condition") return {{"type", "condition type"}, {"status", "truth"}};
    if (shape == "address") return {{"address", "text"}, {"type", "address type"}};
    if (shape == "info") return {{"kubeletVersion", "text"}};
    return {};
  }

  std::string Value(const std::string& shape, int depth) {
    if (depth > 0 && Chance(0.12)) return Any(depth);  // of another type
    if (shape == "conditions") return Array("condition", depth);
    if (shape == "addresses") return Array("address", depth);
    if (!MembersOf(shape).empty()) return Object(shape, depth);
    if (shape == "type") return Quoted({"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "x"});
    if (shape == "condition type") return Quoted({"Ready", "MemoryPressure"});
    if (shape == "truth") return Quoted({"True", "False", "Unknown"});
    if (shape == "address type") return Quoted({"InternalIP", "Hostname", "ExternalIP"});
    if (shape == "flag") return Chance(0.5) ? "true" : "false";
    if (shape == "number") return std::to_string(static_cast<int>(Pick(600)) - 100);
    return Quoted({"", "w-1", "10.5.0.3", "v1.34.1", "1042", "a\\\"b"});
  }

  std::string Object(const std::string& shape, int depth) {
    std::vector<std::string> members;
    for (const Member& m : MembersOf(shape)) {
      const int times = Chance(0.15) ? 0 : Chance(0.15) ? 2 : 1;
      for (int i = 0; i < times; ++i) {
        members.push_back("\"" + std::string(m.key) + "\":" + Value(m.shape, depth + 1));
      }
    }
    if (Chance(0.5)) members.push_back("\"x\":" + Any(depth + 1));
    std::shuffle(members.begin(), members.end(), random_);
    std::string text = "{";
    for (size_t i = 0; i < members.size(); ++i) text += (i ? "," : "") + members[i];
    return text + "}";
  }

  std::string Array(const std::string& element, int depth) {
    std::string text = "[";
    const size_t n = Pick(4);
    for (size_t i = 0; i < n; ++i) text += (i ? "," : "") + Value(element, depth + 1);
    return text + "]";
  }

  std::string Any(int depth) {
    switch (depth > 6 ? Pick(5) : Pick(7)) {
      case 0:
        return "null";
      case 1:
        return "7";
      case 2:
        return "1.5";
      case 3:
        return "\"Ready\"";
      case 4:
        return "false";
      case 5:
        return "[" + Any(depth + 1) + "," + Any(depth + 1) + "]";
      default:
        return "{\"type\":" + Any(depth + 1) + ",\"status\":\"True\"}";
    }
  }

  std::string Quoted(std::initializer_list<const char*> choices) {
    return "\"" + std::string(*(choices.begin() + Pick(choices.size()))) + "\"";
  }
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(random_); }

  std::mt19937 random_{20261206};
};

TEST(NodeWatchLineTest, ReadsEveryLineAsItsDocumentReads) {
  LineMaker maker;
  std::map<std::string, int> reached;  // lines that set each field
  for (int i = 0; i < 20000; ++i) {
    const std::string text = maker.Line();
    const NodeWatchLine read = NodeWatchLineFromJson(text);
    ASSERT_EQ(Describe(read), Describe(ReadAsDocument(text))) << text;
    if (!read.event) {
      reached["error code"] += read.error_code != 0;
      continue;
    }
    const KubeNode& n = read.event->node;
    reached["version"] += !read.event->resource_version.empty();
    reached["name"] += !n.name.empty();
    reached["addresses"] += n.addresses.size() > 1;
    reached["internal ip"] += !n.internal_ip.empty();
    reached["control plane"] += n.control_plane;
    reached["ready"] += n.ready;
    reached["cordoned"] += n.unschedulable;
    reached["kubelet"] += !n.kubelet_version.empty();
    reached["pending install"] += n.pending_install.has_value();
  }
  // The lines reached every field, not only errors and empty Nodes.
  for (const char* field : {"error code", "version", "name", "addresses", "internal ip",
                            "control plane", "ready", "cordoned", "kubelet", "pending install"}) {
    EXPECT_GT(reached[field], 200) << field;
  }
}

}  // namespace
}  // namespace tr::reconciler::kube
