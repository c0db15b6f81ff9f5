#include "reconciler/clients/kube/node_informer.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "base/thread_name.h"

namespace tr::reconciler::kube {

NodeInformer::NodeInformer(std::shared_ptr<KubeClient> kube, Env& env, NodeInformerOptions options)
    : kube_(std::move(kube)), env_(env), options_(options), thread_([this](std::stop_token stop) {
        NameThisThread("node-informer");
        Run(std::move(stop));
      }) {}

NodeInformer::~NodeInformer() {
  thread_.request_stop();
  thread_.join();
}

std::optional<std::vector<KubeNode>> NodeInformer::Nodes() const {
  MutexLock lock(mu_);
  return NodesLocked();
}

namespace {

// Whether going from `a` to `b` is worth a look now: a wait ends with the Node Ready, and
// cordons and marks are mostly this process's own writes.
bool WorthALook(const KubeNode& a, const KubeNode& b) { return a.ready != b.ready; }

}  // namespace

std::optional<std::vector<KubeNode>> NodeInformer::NodesSince(const std::string& at_least) const {
  MutexLock lock(mu_);
  if (!at_least.empty()) {
    uint64_t wanted = 0;
    uint64_t held = 0;
    if (!absl::SimpleAtoi(at_least, &wanted) || !absl::SimpleAtoi(version_, &held) ||
        held < wanted) {
      return std::nullopt;
    }
  }
  return NodesLocked();
}

std::optional<std::vector<KubeNode>> NodeInformer::NodesLocked() const {
  if (!current_) return std::nullopt;
  std::vector<KubeNode> nodes;
  nodes.reserve(nodes_.size());
  for (const auto& [name, node] : nodes_) nodes.push_back(node);
  return nodes;
}

NodeInformer::Counts NodeInformer::counts() const {
  MutexLock lock(mu_);
  return counts_;
}

bool NodeInformer::WaitUntil(const Condition& ready, std::chrono::milliseconds within) const {
  MutexLock lock(mu_);
  return env_.WaitFor(changed_, lock, {}, within, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return ready(counts_, NodesLocked());
  });
}

void NodeInformer::Run(std::stop_token stop) {
  int failures_in_a_row = 0;
  while (!stop.stop_requested()) {
    bool listed = false;
    const absl::Status broke = ListAndWatch(stop, listed);
    if (listed) failures_in_a_row = 0;
    {
      MutexLock lock(mu_);
      current_ = false;
      if (!broke.ok()) ++counts_.failures;
      changed_.notify_all();
    }
    if (stop.stop_requested()) return;
    // 410 Expired asks for a new list at once; anything else waits, longer each time.
    if (absl::IsOutOfRange(broke)) continue;
    ++failures_in_a_row;
    if (!env_.SleepFor(JitteredBackoff(options_.retry, failures_in_a_row, env_), stop)) return;
  }
}

absl::Status NodeInformer::ListAndWatch(std::stop_token stop, bool& listed) {
  absl::StatusOr<VersionedNodes> list = kube_->ListNodesVersioned();
  {
    MutexLock lock(mu_);
    ++counts_.lists;
    changed_.notify_all();
  }
  if (!list.ok()) return list.status();
  listed = true;
  std::string version = list->resource_version;
  {
    MutexLock lock(mu_);
    nodes_.clear();
    for (KubeNode& node : list->nodes) nodes_[node.name] = std::move(node);
    current_ = true;
    version_ = version;
    changed_.notify_all();
  }
  if (options_.on_change) options_.on_change(nullptr);  // what a look asked meanwhile may be older
  while (!stop.stop_requested()) {
    {
      MutexLock lock(mu_);
      ++counts_.watches;
      changed_.notify_all();
    }
    absl::Status ended =
        kube_->WatchNodes(version, options_.watch_timeout, stop, [&](const NodeWatchEvent& e) {
          if (Apply(e) && options_.on_change) options_.on_change(&e);
          if (!e.resource_version.empty()) version = e.resource_version;
          return true;
        });
    // Ended by the server (its timeout): the cache is still current; watch on from `version`.
    if (!ended.ok()) return stop.stop_requested() ? absl::OkStatus() : ended;
  }
  return absl::OkStatus();
}

bool NodeInformer::Apply(const NodeWatchEvent& e) {
  MutexLock lock(mu_);
  using Type = NodeWatchEvent::Type;
  bool changed = false;
  if (e.type == Type::kAdded || e.type == Type::kModified) {
    auto it = nodes_.find(e.node.name);
    changed = it == nodes_.end() || WorthALook(it->second, e.node);
    nodes_[e.node.name] = e.node;
  }
  if (e.type == Type::kDeleted) changed = nodes_.erase(e.node.name) > 0;
  if (!e.resource_version.empty()) version_ = e.resource_version;
  ++counts_.events;
  changed_.notify_all();
  return changed;
}

}  // namespace tr::reconciler::kube
