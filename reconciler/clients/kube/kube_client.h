// KubeClient: the few Kubernetes API calls an upgrade needs — nodes (readiness, kubelet
// version, cordon, the pending-install mark), the pods on a node, and the eviction subresource that honours
// PodDisruptionBudgets. Errors as absl::Status, chosen by what the caller does next:
//   Unavailable / DeadlineExceeded  the API server did not answer: retry later
//   ResourceExhausted               429: an eviction a PodDisruptionBudget forbids now (and
//                                   the 500 for a pod under more than one budget)
//   NotFound                        404
//   OutOfRange                      410 Expired of a watch: list again
//   AlreadyExists                   409 AlreadyExists: a create of a name that is taken
//   Aborted                         409 Conflict: an update on a stale resourceVersion
//   PermissionDenied / Unauthenticated  403 / 401
//   Internal                        any other answer, with the server's message
// No HTTP library type appears here.
//
// Thread-safety: implementations are safe to call from several threads.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/workload_readiness.h"

namespace tr::reconciler::kube {

struct KubeNode {
  std::string name;
  std::vector<std::string> addresses;  // InternalIP (and other) addresses
  std::string internal_ip;             // the first InternalIP address; "" when none
  bool control_plane = false;          // labelled node-role.kubernetes.io/control-plane
  bool ready = false;                  // condition Ready == True
  bool unschedulable = false;          // spec.unschedulable (cordoned)
  std::string kubelet_version;         // status.nodeInfo.kubeletVersion, "v1.34.1"
  // The annotation core::kPendingInstallAnnotation as written (core::ParsePendingMark reads
  // it); unset when the Node has none.
  std::optional<std::string> pending_install;
};

struct KubePod {
  std::string namespace_name;
  std::string name;
  std::string node;
  std::string owner_kind;  // kind of the controller owner reference; "" when none
  bool mirror = false;     // a static pod's mirror (annotation kubernetes.io/config.mirror)
  bool terminal = false;   // phase Succeeded or Failed
};

// A pod with the status an upgrade waits on.
struct KubePodDetail {
  KubePod pod;
  std::string host_ip;         // status.hostIP
  std::string image;           // the first container's image
  bool ready = false;          // condition Ready == True
  std::string config_version;  // annotation talos.dev/config-version (Talos static pods)
};

// The Nodes and the resourceVersion of the list, where a watch takes over from it.
struct VersionedNodes {
  std::vector<KubeNode> nodes;
  std::string resource_version;
};

// One event of a watch of Nodes.
struct NodeWatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark };
  Type type = Type::kBookmark;
  KubeNode node;                 // empty for a bookmark
  std::string resource_version;  // the object's metadata.resourceVersion (the bookmark's)
};

// The Kubernetes node of a profile node: the one named `name`, else the one that has `address`
// among its addresses (a node registered under another name); nullptr when none. Points into
// `nodes`.
const KubeNode* FindKubeNode(const std::vector<KubeNode>& nodes, std::string_view name,
                             std::string_view address);

class KubeClient {
 public:
  virtual ~KubeClient() = default;
  virtual absl::StatusOr<std::vector<KubeNode>> ListNodes() = 0;
  // Sets spec.unschedulable with a merge patch (cordon / uncordon).
  virtual absl::Status SetUnschedulable(const std::string& node, bool unschedulable) = 0;
  // With a value: sets the annotation core::kPendingInstallAnnotation to it (the text of
  // core::EncodePendingMark) and the label core::kPendingRebootLabel to "true"; with nullopt:
  // removes both (removing what is not there succeeds). One merge patch; the Node's other
  // labels and annotations are kept. NotFound when there is no Node `node`.
  virtual absl::Status SetPendingInstall(const std::string& node,
                                         const std::optional<std::string>& annotation) = 0;
  // The newest resourceVersion a Node write of this client (the two above) got back; "" before
  // any, and from clients that do not tell. A cache of the Nodes is current for this client's
  // own writes once it holds that version (NodeInformer::NodesSince).
  virtual std::string LastNodeWriteVersion() const { return ""; }
  // Pods with spec.nodeName == node, in every namespace.
  virtual absl::StatusOr<std::vector<KubePod>> ListPodsOnNode(const std::string& node) = 0;
  // POST .../pods/<name>/eviction. ResourceExhausted (429) when a disruption budget forbids it.
  virtual absl::Status EvictPod(const std::string& namespace_name, const std::string& name) = 0;
  // The apps/v1 workloads of `kind` (Deployment | StatefulSet | DaemonSet) in `namespace_name`:
  // the one called `name` (NotFound when there is none), else those matching `label_selector`
  // (every one when empty).
  virtual absl::StatusOr<std::vector<core::WorkloadStatus>> ListWorkloads(
      const std::string& kind, const std::string& namespace_name, const std::string& name,
      const std::string& label_selector) {
    (void)kind, (void)namespace_name, (void)name, (void)label_selector;
    return absl::UnimplementedError("this Kubernetes client cannot list workloads");
  }
  // GET /api/v1/nodes with the list's resourceVersion.
  virtual absl::StatusOr<VersionedNodes> ListNodesVersioned() {
    return absl::UnimplementedError("this Kubernetes client cannot list nodes with a version");
  }
  // A watch of Nodes from `resource_version` (a list's, or the last event's): calls `on_event`
  // for each event, bookmarks included, until it returns false or the server ends the watch
  // (both OK: watch again from the last resourceVersion), `timeout` passes (the server is asked
  // to end it then), `stop` is requested (Cancelled) or it fails. OutOfRange when the server no
  // longer has the events after `resource_version` (410 Expired): list again, then watch.
  // The watch holds a connection of its own, and the calling thread, until it ends.
  virtual absl::Status WatchNodes(const std::string& resource_version,
                                  std::chrono::seconds timeout, std::stop_token stop,
                                  const std::function<bool(const NodeWatchEvent&)>& on_event) {
    (void)resource_version, (void)timeout, (void)stop, (void)on_event;
    return absl::UnimplementedError("this Kubernetes client cannot watch nodes");
  }
  // Pods of a namespace matching an equality label selector ("k8s-app=kube-apiserver").
  virtual absl::StatusOr<std::vector<KubePodDetail>> ListPods(const std::string& namespace_name,
                                                              const std::string& label_selector) {
    (void)namespace_name;
    (void)label_selector;
    return absl::UnimplementedError("ListPods");
  }
  // Raw object calls for kinds without a typed method (coordination.k8s.io Leases): the
  // object's JSON as the server answered it. Create: POST `object` to the collection `path`.
  // Replace: PUT `object` at `path`. (GetObject below reads one.)
  virtual absl::StatusOr<std::string> CreateObject(const std::string& path,
                                                   const std::string& object) {
    (void)path, (void)object;
    return absl::UnimplementedError("CreateObject");
  }
  virtual absl::StatusOr<std::string> ReplaceObject(const std::string& path,
                                                    const std::string& object) {
    (void)path, (void)object;
    return absl::UnimplementedError("ReplaceObject");
  }
  // DELETE `path` with `options` (a meta/v1 DeleteOptions as JSON, e.g. propagationPolicy
  // Background so a Job's pods go with it); NotFound when there is nothing to delete.
  virtual absl::Status DeleteObject(const std::string& path, const std::string& options) {
    (void)path, (void)options;
    return absl::UnimplementedError("DeleteObject");
  }
  // How many objects a list path ("/apis/<group>/<version>/<resource>") holds; NotFound when
  // the API is not served.
  virtual absl::StatusOr<int> CountObjects(const std::string& list_path) {
    (void)list_path;
    return absl::UnimplementedError("CountObjects");
  }
  // The object at `path` ("/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy") as JSON
  // text; NotFound when there is none.
  virtual absl::StatusOr<std::string> GetObject(const std::string& path) {
    (void)path;
    return absl::UnimplementedError("GetObject");
  }
  // The text/plain answer at `path` (a pod's log: ".../pods/<pod>/log?container=c&tailLines=20");
  // NotFound, PermissionDenied, InvalidArgument (400) as the API answers.
  virtual absl::StatusOr<std::string> GetText(const std::string& path) {
    (void)path;
    return absl::UnimplementedError("GetText");
  }
  // Server-side apply of `object_yaml` at `path` (PATCH application/apply-patch+yaml) as
  // `field_manager`, taking over fields other managers own (force).
  virtual absl::Status ApplyObject(const std::string& path, const std::string& object_yaml,
                                   const std::string& field_manager) {
    (void)path, (void)object_yaml, (void)field_manager;
    return absl::UnimplementedError("ApplyObject");
  }
};

}  // namespace tr::reconciler::kube
