// NodeWatchLineFromJson (kube_json.h): one line of a watch of Nodes read by nlohmann's SAX
// parser, keeping only the fields a KubeNode holds. A line is a whole Node (1–20 KiB, most of it
// images, managed fields and conditions nobody here reads); building it as a document first
// allocated every one of its values, for each event of every cluster watched.
//
// It reads as the document did (kube_json.cc's NodesFromList, which NodeWatchLineTest holds it
// to): a field of another type reads as missing, and a key given twice counts as its last.
// Each key the reader follows clears what it would set before its value is read, so the last
// one wins whole, as the document's did.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/pending_mark.h"
#include "reconciler/clients/kube/kube_json.h"

namespace tr::reconciler::kube {
namespace {

using nlohmann::json;

// Where the parser is: the container just opened, or the value the last key names.
enum class At {
  kSkipped,  // nothing read below here
  kRoot,     // the line's value
  kLine,     // the line's object: {"type": …, "object": …}
  kType,
  kObject,  // a Node, or an ERROR event's Status
  kCode,
  kReason,
  kMessage,
  kMetadata,
  kName,
  kVersion,
  kLabels,
  kControlPlaneLabel,
  kAnnotations,
  kPendingInstall,
  kSpec,
  kUnschedulable,
  kStatus,
  kConditions,        // the array
  kConditionElement,  // a value in it
  kCondition,         // an object in it
  kConditionType,
  kConditionStatus,
  kAddresses,
  kAddressElement,
  kAddress,
  kAddressText,
  kAddressType,
  kNodeInfo,
  kKubeletVersion,
};

struct FollowedKey {
  At parent;
  std::string_view key;
  At at;
};

constexpr std::string_view kControlPlaneLabel = "node-role.kubernetes.io/control-plane";

constexpr FollowedKey kFollowedKeys[] = {
    {At::kLine, "type", At::kType},
    {At::kLine, "object", At::kObject},
    {At::kObject, "code", At::kCode},
    {At::kObject, "reason", At::kReason},
    {At::kObject, "message", At::kMessage},
    {At::kObject, "metadata", At::kMetadata},
    {At::kObject, "spec", At::kSpec},
    {At::kObject, "status", At::kStatus},
    {At::kMetadata, "name", At::kName},
    {At::kMetadata, "resourceVersion", At::kVersion},
    {At::kMetadata, "labels", At::kLabels},
    {At::kMetadata, "annotations", At::kAnnotations},
    {At::kLabels, kControlPlaneLabel, At::kControlPlaneLabel},
    {At::kAnnotations, core::kPendingInstallAnnotation, At::kPendingInstall},
    {At::kSpec, "unschedulable", At::kUnschedulable},
    {At::kStatus, "conditions", At::kConditions},
    {At::kStatus, "addresses", At::kAddresses},
    {At::kStatus, "nodeInfo", At::kNodeInfo},
    {At::kCondition, "type", At::kConditionType},
    {At::kCondition, "status", At::kConditionStatus},
    {At::kAddress, "address", At::kAddressText},
    {At::kAddress, "type", At::kAddressType},
    {At::kNodeInfo, "kubeletVersion", At::kKubeletVersion},
};

bool IsObject(At at) {
  switch (at) {
    case At::kObject:
    case At::kMetadata:
    case At::kLabels:
    case At::kAnnotations:
    case At::kSpec:
    case At::kStatus:
    case At::kNodeInfo:
      return true;
    default:
      return false;
  }
}

// What the line says, as far as it was read. The SAX interface nlohmann::json::sax_parse calls.
class LineReader {
 public:
  std::string type;
  std::string version;
  KubeNode node;
  int64_t code = 0;
  std::string reason;
  std::string message;

  bool null() { return Scalar(); }
  bool boolean(bool value) {
    if (Next() == At::kUnschedulable) node.unschedulable = value;
    return Scalar();
  }
  bool number_integer(json::number_integer_t value) { return Integer(value); }
  bool number_unsigned(json::number_unsigned_t value) {
    return Integer(static_cast<int64_t>(value));
  }
  bool number_float(json::number_float_t, const json::string_t&) { return Scalar(); }
  bool binary(json::binary_t&) { return Scalar(); }
  bool string(json::string_t& value) {
    const At next = Next();
    if (std::string* text = TextAt(next)) *text = std::move(value);
    if (next == At::kPendingInstall) node.pending_install = std::move(value);
    return Scalar();
  }
  bool start_object(std::size_t) {
    const At next = Next();
    At opened = IsObject(next) ? next : At::kSkipped;
    if (next == At::kRoot) opened = At::kLine;
    if (next == At::kConditionElement) {
      opened = At::kCondition;
      condition_ = {};
    }
    if (next == At::kAddressElement) {
      opened = At::kAddress;
      address_ = {};
    }
    stack_.push_back(opened);
    return true;
  }
  bool key(json::string_t& key) {
    key_ = At::kSkipped;
    if (stack_.back() == At::kSkipped) return true;  // most keys of a Node
    for (const FollowedKey& field : kFollowedKeys) {
      if (field.parent == stack_.back() && field.key == key) key_ = field.at;
    }
    Clear(key_);
    return true;
  }
  bool end_object() {
    const At closed = stack_.back();
    stack_.pop_back();
    if (closed == At::kCondition && condition_.first == "Ready") {
      node.ready = condition_.second == "True";
    }
    if (closed == At::kAddress) AddAddress(std::move(address_.first), address_.second);
    return true;
  }
  bool start_array(std::size_t) {
    const At next = Next();
    // An element of addresses that is no object still counts, as an address of "".
    if (next == At::kAddressElement) AddAddress("", "");
    stack_.push_back(next == At::kConditions || next == At::kAddresses ? next : At::kSkipped);
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  // Ends the parse: sax_parse then returns false, as it does for nothing else here.
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

 private:
  // What the next value is: the line itself, an element of an array, or what the last key of
  // an object names.
  At Next() const {
    if (stack_.empty()) return At::kRoot;
    if (stack_.back() == At::kConditions) return At::kConditionElement;
    if (stack_.back() == At::kAddresses) return At::kAddressElement;
    if (stack_.back() == At::kSkipped) return At::kSkipped;
    return key_;
  }

  // A scalar was read: as an element of addresses it is an address of "".
  bool Scalar() {
    if (Next() == At::kAddressElement) AddAddress("", "");
    return true;
  }

  bool Integer(int64_t value) {
    if (Next() == At::kCode) code = value;
    return Scalar();
  }

  void AddAddress(std::string address, const std::string& kind) {
    node.addresses.push_back(std::move(address));
    if (node.internal_ip.empty() && kind == "InternalIP") node.internal_ip = node.addresses.back();
  }

  std::string* TextAt(At at) {
    switch (at) {
      case At::kType:
        return &type;
      case At::kReason:
        return &reason;
      case At::kMessage:
        return &message;
      case At::kName:
        return &node.name;
      case At::kVersion:
        return &version;
      case At::kConditionType:
        return &condition_.first;
      case At::kConditionStatus:
        return &condition_.second;
      case At::kAddressText:
        return &address_.first;
      case At::kAddressType:
        return &address_.second;
      case At::kKubeletVersion:
        return &node.kubelet_version;
      default:
        return nullptr;
    }
  }

  // Forgets what `at` set before: a key given again counts as its last value alone.
  void Clear(At at) {
    if (std::string* text = TextAt(at)) text->clear();
    switch (at) {
      case At::kObject:
        node = {};
        version.clear();
        code = 0;
        reason.clear();
        message.clear();
        break;
      case At::kCode:
        code = 0;
        break;
      case At::kMetadata:
        node.name.clear();
        version.clear();
        node.control_plane = false;
        node.pending_install.reset();
        break;
      case At::kLabels:
        node.control_plane = false;
        break;
      case At::kControlPlaneLabel:
        node.control_plane = true;  // there, whatever its value
        break;
      case At::kAnnotations:
      case At::kPendingInstall:
        node.pending_install.reset();
        break;
      case At::kSpec:
      case At::kUnschedulable:
        node.unschedulable = false;
        break;
      case At::kStatus:
        node.ready = false;
        node.addresses.clear();
        node.internal_ip.clear();
        node.kubelet_version.clear();
        break;
      case At::kConditions:
        node.ready = false;
        break;
      case At::kAddresses:
        node.addresses.clear();
        node.internal_ip.clear();
        break;
      case At::kNodeInfo:
        node.kubelet_version.clear();
        break;
      default:
        break;
    }
  }

  std::vector<At> stack_;
  At key_ = At::kSkipped;
  std::pair<std::string, std::string> condition_;  // type, status
  std::pair<std::string, std::string> address_;    // address, type
};

}  // namespace

NodeWatchLine NodeWatchLineFromJson(std::string_view line) {
  LineReader read;
  if (!json::sax_parse(line, &read)) read = LineReader();  // a line that is no JSON says nothing
  NodeWatchLine out;
  using Type = NodeWatchEvent::Type;
  static constexpr std::pair<std::string_view, Type> kTypes[] = {{"ADDED", Type::kAdded},
                                                                 {"MODIFIED", Type::kModified},
                                                                 {"DELETED", Type::kDeleted},
                                                                 {"BOOKMARK", Type::kBookmark}};
  for (const auto& [name, type] : kTypes) {
    if (read.type != name) continue;
    NodeWatchEvent event;
    event.type = type;
    if (type != Type::kBookmark) event.node = std::move(read.node);
    event.resource_version = std::move(read.version);
    out.event = std::move(event);
    return out;
  }
  out.error_code = static_cast<int>(read.code);
  out.error_reason = std::move(read.reason);
  out.error_message = std::move(read.message);
  if (read.type != "ERROR" && out.error_message.empty()) {
    out.error_message = "not a watch event: " + std::string(line.substr(0, 120));
  }
  return out;
}

}  // namespace tr::reconciler::kube
