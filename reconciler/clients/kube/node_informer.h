// NodeInformer: a cluster's Nodes kept current by a list and a watch, as client-go's informers
// keep theirs (issue 53: observe by watching). One thread lists the Nodes, then watches from
// the list's resourceVersion and applies each event to a map by name; a watch the server ends
// is watched again from the last resourceVersion it saw (bookmarks move it on while nothing
// changes); 410 Expired (OutOfRange) lists again; any other failure waits a jittered backoff
// and lists again. Nodes() answers from the map only while it is current — listed, and the
// watch since then not broken — and nullopt otherwise, so that a caller asks the API itself,
// as it did before there were watches.
//
// Thread-safety: Nodes() and counts() from any thread; the destructor stops the thread (it
// ends the watch at once) and joins it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "base/env.h"
#include "base/mutex.h"
#include "reconciler/clients/kube/kube_client.h"

namespace tr::reconciler::kube {

struct NodeInformerOptions {
  std::chrono::seconds watch_timeout{300};  // the server ends each watch then; watched again
  BackoffPolicy retry{std::chrono::milliseconds(500), std::chrono::seconds(30), 0};
  // Called on the informer's thread after each list (with nullptr: anything may have changed),
  // and after the cache took an event that added or deleted a Node or changed its Ready
  // condition (with that event; not a cordon, a label or a bookmark): what ends a wait. Must
  // not block. May be empty.
  std::function<void(const NodeWatchEvent* event)> on_change;
};

class NodeInformer {
 public:
  NodeInformer(std::shared_ptr<KubeClient> kube, Env& env, NodeInformerOptions options = {});
  ~NodeInformer();
  NodeInformer(const NodeInformer&) = delete;
  NodeInformer& operator=(const NodeInformer&) = delete;

  // The Nodes as the API holds them now, in name order; nullopt while not current (not yet
  // listed, or the watch broke and the list is not made again yet).
  std::optional<std::vector<KubeNode>> Nodes() const;
  // As Nodes(), and only once the cache holds resourceVersion `at_least` (the one a write of
  // this process got back): a cache behind its own writes answers nullopt, as client-go's
  // mutation cache would have it. resourceVersions are compared as numbers, as that cache
  // does; one that is not a number answers nullopt. "" holds at once.
  std::optional<std::vector<KubeNode>> NodesSince(const std::string& at_least) const;

  // What the informer has asked the API so far, and how often its cache changed.
  struct Counts {
    int lists = 0;
    int watches = 0;
    int events = 0;  // watch events applied, bookmarks included
    int failures = 0;
  };
  Counts counts() const;
  // Waits (at most `within`) until `ready` holds for the counts and what Nodes() would answer;
  // for tests and benchmarks.
  using Condition = std::function<bool(const Counts&, const std::optional<std::vector<KubeNode>>&)>;
  bool WaitUntil(const Condition& ready, std::chrono::milliseconds within) const;

 private:
  void Run(std::stop_token stop);
  // Lists, then watches until the watch breaks: the failure (OK when stopped). `listed` tells
  // whether the list went through.
  absl::Status ListAndWatch(std::stop_token stop, bool& listed);
  std::optional<std::vector<KubeNode>> NodesLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies a watch event to the cache; true when it is one on_change is told of.
  bool Apply(const NodeWatchEvent& e);

  const std::shared_ptr<KubeClient> kube_;
  Env& env_;
  const NodeInformerOptions options_;
  mutable Mutex mu_;
  mutable std::condition_variable_any changed_;
  std::map<std::string, KubeNode> nodes_ ABSL_GUARDED_BY(mu_);
  bool current_ ABSL_GUARDED_BY(mu_) = false;
  std::string version_ ABSL_GUARDED_BY(mu_);  // the newest resourceVersion the cache holds
  Counts counts_ ABSL_GUARDED_BY(mu_);
  std::jthread thread_;  // last: started once everything it uses exists, joined first
};

}  // namespace tr::reconciler::kube
