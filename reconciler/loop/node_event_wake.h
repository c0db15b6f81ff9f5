// NodeEventWake: wakes a cluster's reconcile as soon as a node it has in flight reports, through
// MachineService/Events, what ends its wait, so the rollout sees a node come back without
// waiting out --node-poll-interval. The poll stays, five times slower while the node is heard
// (core::kHeardPollFactor): events bring the looks that matter; a node whose stream cannot be
// opened costs one poll interval, a wake lost at most five. A follow keeps the Talos client it
// started with.
//
// A followed node holds no thread: its events arrive through a stream of the Talos client's own
// (TalosClient::StartEvents: an asynchronous reader on the process's stream queue), and one
// thread of this object subscribes again the nodes whose stream ended, each when its backoff
// is due. Every node in flight is
// followed: there is no cap (what one costs: docs/architecture.md, Threads). A follow's first
// stream subscribes to the node's new events (tail_events 0) and calls `wake(cluster)` when the
// node reports itself RUNNING and ready (a MachineStatusEvent: the end of a node's wait; Talos'
// readiness includes the Kubernetes node's) or a sequence failed, once it is live (what
// happened before it is not known), and when a live stream breaks (the node goes down, which
// its status should say). The stages on the way wake nothing: they only change what the status
// says, which the poll brings. When the stream breaks (the node reboots) it subscribes again
// after a backoff, as `talosctl upgrade --wait` does, replaying what the node buffered
// (tail_events -1, as talosctl does): a node ready before the stream opened is told by the
// replay, so the hello of a stream opened again wakes nothing (the look it woke found the node
// booting and decided nothing); after a node that said it is going down
// (stage REBOOTING or SHUTTING_DOWN, which Talos sets before the reboot) the first wait is
// already the longest, since a node is never back within the shorter ones; so it is for a
// follow whose first subscription finds the node down (the rollout hands a node read from its
// live watch over only once it fell: RolloutReconciler::FollowInFlight). `Hearing` tells the
// reconciler which nodes it hears (stream live, or down and subscribed to again), so that it can
// look at them less often. `wake` runs on the client's threads: it must not block.
//
// Time, the waits of the backoff and its jitter come from the injected Env. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/env.h"
#include "base/mutex.h"
#include "core/profile.h"
#include "core/rollout_types.h"
#include "reconciler/clients/cluster_clients.h"
#include "reconciler/clients/talos/talos_types.h"

namespace tr::reconciler {

// The events after which a reconcile may decide something new about a node in flight: the node
// RUNNING and ready, a sequence that failed, and the hello that opens a stream.
bool WakesCluster(const talos::MachineEvent& event);

struct NodeEventWakeOptions {
  // Between two subscriptions while a node is down. A node counts as heard (`Hearing`) then
  // too, and its cluster polls it kHeardPollFactor times less often: keep the maximum at most
  // that poll's interval, so the node's return is seen within it.
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{std::chrono::seconds(2)};
};

// The options for a daemon that polls a node in flight every `node_poll`: the defaults, the
// maximum at most the poll of a node it hears (kHeardPollFactor node polls). A node answers again
// well before it is ready (apid starts early in the boot), so the event that ends its wait finds
// the stream open; probing a node that is down once a node poll was most of the events calls of
// a rollout (docs/benchmarks.md).
NodeEventWakeOptions NodeEventWakeOptionsFor(std::chrono::milliseconds node_poll);

// What follows the nodes a cluster has in flight (the rollout reconciler tells it at the end of
// each reconcile, and which nodes it keeps after each action).
class InFlightFollower {
 public:
  virtual ~InFlightFollower() = default;
  // From now on follows exactly `nodes` (names of `profile`'s nodes) of the profile's cluster.
  virtual void Follow(const core::ClusterProfile& profile,
                      const std::vector<std::string>& nodes) = 0;
  // Stops following the nodes of `cluster` not in `nodes`; starts following none.
  virtual void Keep(const std::string& cluster, const std::vector<std::string>& nodes) = 0;
  // Stops following every node of `cluster`.
  virtual void Forget(const std::string& cluster) = 0;
  // Whether each of `nodes` of `cluster` is heard: its event stream is open, so that what ends
  // its wait and the stream breaking wake the cluster, or the node is down and subscribed to
  // again on the backoff, so that its return wakes it. False for an empty list.
  virtual bool Hearing(const std::string& cluster, const std::vector<std::string>& nodes) const {
    (void)cluster;
    (void)nodes;
    return false;
  }
  // Whether `node` of `cluster` is followed (Follow started it; heard or not).
  virtual bool IsFollowing(const std::string& cluster, const std::string& node) const = 0;
};

class NodeEventWake final : public InFlightFollower {
 public:
  using Wake = std::function<void(const std::string& cluster)>;

  NodeEventWake(ClusterClientFactory& clients, Wake wake, Env& env,
                NodeEventWakeOptions options = {});
  ~NodeEventWake() override;  // ends every stream and the thread
  NodeEventWake(const NodeEventWake&) = delete;
  NodeEventWake& operator=(const NodeEventWake&) = delete;

  // Subscribes to the nodes not followed yet, ends the streams of the cluster's others.
  void Follow(const core::ClusterProfile& profile, const std::vector<std::string>& nodes) override;
  void Keep(const std::string& cluster, const std::vector<std::string>& nodes) override;
  void Forget(const std::string& cluster) override;
  bool Hearing(const std::string& cluster, const std::vector<std::string>& nodes) const override;
  bool IsFollowing(const std::string& cluster, const std::string& node) const override;
  // How many nodes are followed now.
  size_t Following() const;

 private:
  // One node's follow: its stream, or its wait to subscribe again (node_event_wake.cc).
  struct Followed;
  using Follows = std::vector<std::shared_ptr<Followed>>;

  // Takes the follows of `cluster`'s nodes not in `nodes` out of followed_, to be stopped.
  Follows TakeAllBut(const std::string& cluster, const std::vector<std::string>& nodes)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Starts the node's stream unless its follow was stopped; on the subscribing thread.
  void Subscribe(const std::shared_ptr<Followed>& follow);
  // The stream's end (its on_done): wakes the cluster when a live stream broke, and subscribes
  // again after the backoff.
  void Ended(const std::shared_ptr<Followed>& follow, const absl::Status& status);
  void SubscribeAt(std::shared_ptr<Followed> follow, Env::Instant due);
  // Ends the streams of `follows` and waits for their ends; called without mu_ held.
  static void Stop(const Follows& follows);
  // The subscribing thread: starts each stream when it is due.
  void Run(const std::stop_token& stop);

  ClusterClientFactory& clients_;
  const Wake wake_;
  Env& env_;
  const NodeEventWakeOptions options_;
  mutable Mutex mu_;
  // By cluster, then node name.
  std::map<std::string, std::map<std::string, std::shared_ptr<Followed>>> followed_
      ABSL_GUARDED_BY(mu_);
  // The subscriptions to make, by when (Env::Monotonic); `due_changed_` is notified with each.
  std::multimap<Env::Instant, std::shared_ptr<Followed>> due_ ABSL_GUARDED_BY(mu_);
  uint64_t scheduled_ ABSL_GUARDED_BY(mu_) = 0;  // subscriptions asked for so far
  std::condition_variable_any due_changed_;
  std::jthread subscriber_;  // last: it uses all of the above
};

}  // namespace tr::reconciler
