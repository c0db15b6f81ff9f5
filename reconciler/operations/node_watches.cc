#include "reconciler/operations/node_watches.h"

#include <algorithm>
#include <condition_variable>
#include <utility>

#include "base/futex_hash.h"

namespace tr::reconciler {

// What a watch's callbacks have seen. Written on the client's threads, read by looks.
struct NodeWatches::Feed {
  Mutex mu;
  bool live ABSL_GUARDED_BY(mu) = false;     // sent a status, not ended
  bool ended ABSL_GUARDED_BY(mu) = false;    // on_done ran, or an event was not a status
  bool refused ABSL_GUARDED_BY(mu) = false;  // not to be started again on this client
  bool fell ABSL_GUARDED_BY(mu) = false;     // ended live, not cancelled here: it woke
  bool fall_taken ABSL_GUARDED_BY(mu) = false;  // a look read the fall (TakeFall)
  bool awaited ABSL_GUARDED_BY(mu) = false;     // a look waits for the first status
  absl::Status end ABSL_GUARDED_BY(mu);         // why it ended
  std::condition_variable_any changed;          // live or ended, for StartAndAwait
  talos::MachineStatus machine ABSL_GUARDED_BY(mu);
  std::string boot_id ABSL_GUARDED_BY(mu);
  // A boot id read before the watch started and after a status whose `created` is this:
  // the watch's boot once the watch sends a status with the same `created`.
  std::string read_after_created ABSL_GUARDED_BY(mu);
  std::string read_boot_id ABSL_GUARDED_BY(mu);
};

namespace {

// A node that refuses the watch refuses it again: its role, its version or the type.
bool RefusedForGood(const absl::Status& why) {
  return absl::IsPermissionDenied(why) || absl::IsUnimplemented(why) ||
         absl::IsInvalidArgument(why) || absl::IsNotFound(why);
}

// The stages of a sequence that ends in the node's fall (Talos computes no readiness in them:
// docs/talos-api.md §6.3): the fall, the watch's end, is what wakes.
bool Falling(core::MachineStage stage) {
  return stage == core::MachineStage::kUpgrading || stage == core::MachineStage::kRebooting ||
         stage == core::MachineStage::kShuttingDown;
}

}  // namespace

NodeWatches::NodeWatches(Env& env, Wake wake, std::chrono::milliseconds idle)
    : env_(env),
      wake_(std::move(wake)),
      idle_(idle),
      closer_(kube::IdleCloser::Shared(env)),
      closer_id_(closer_->Add(idle, [this](Env::TimePoint now) { return SweepIdle(now); })) {}

NodeWatches::~NodeWatches() {
  closer_->Remove(closer_id_);  // the sweep is not running once this returns
  Stop();
}

void NodeWatches::Stop() {
  std::unordered_map<std::string, Cluster> ending;
  {
    MutexLock lock(mu_);
    stopped_ = true;
    ending.swap(clusters_);
  }
  // `ending` is destroyed here, outside the lock: each stream waits for its on_done, each
  // informer for its thread.
}

bool NodeWatches::Looked(const std::string& cluster) {
  const Env::TimePoint now = env_.Now();
  MutexLock lock(mu_);
  if (stopped_) return false;
  Cluster& c = clusters_[cluster];
  const bool looked_before = c.last_look != Env::TimePoint{};
  const auto gap = now - c.last_look;
  // Started by looks less than half the idle time apart, kept until the idle time: a cluster at
  // a resync near the idle time would otherwise start its watches at one look and have them
  // swept before the next (fleet_scale_bench at --resync 1m, docs/benchmarks.md).
  c.watched = looked_before && (gap < idle_ / 2 || (c.watched && gap < idle_));
  c.last_look = now;
  return c.watched;
}

NodeWatches::Watch* NodeWatches::WatchLocked(const std::string& cluster, const std::string& address,
                                             const talos::TalosClient* client) {
  auto c = clusters_.find(cluster);
  if (c == clusters_.end()) return nullptr;
  auto w = c->second.nodes.find(address);
  if (w == c->second.nodes.end() || w->second.client.get() != client) return nullptr;
  return &w->second;
}

std::optional<NodeWatches::Known> NodeWatches::Find(const std::string& cluster,
                                                    const std::string& address,
                                                    const talos::TalosClient* client) {
  MutexLock lock(mu_);
  const Watch* watch = WatchLocked(cluster, address, client);
  if (watch == nullptr) return std::nullopt;
  Feed& feed = *watch->feed;
  MutexLock feed_lock(feed.mu);
  if (!feed.live) return std::nullopt;
  return Known{watch->id, feed.boot_id, feed.machine};
}

std::optional<talos::MachineStatus> NodeWatches::SeenAtStart(const std::string& cluster,
                                                             const std::string& address,
                                                             const talos::TalosClient* client,
                                                             std::chrono::milliseconds fresh) {
  MutexLock lock(mu_);
  const Watch* watch = WatchLocked(cluster, address, client);
  if (watch == nullptr || env_.Monotonic() - watch->started >= fresh) return std::nullopt;
  Feed& feed = *watch->feed;
  MutexLock feed_lock(feed.mu);
  if (feed.live || feed.ended) return std::nullopt;
  return feed.machine;  // `seen` until the watch sends a status
}

bool NodeWatches::TakeFall(const std::string& cluster, const std::string& address,
                           const talos::TalosClient* client) {
  MutexLock lock(mu_);
  const Watch* watch = WatchLocked(cluster, address, client);
  if (watch == nullptr) return false;
  Feed& feed = *watch->feed;
  MutexLock feed_lock(feed.mu);
  if (!feed.fell || feed.fall_taken) return false;
  feed.fall_taken = true;
  return true;
}

NodeWatches::Watch NodeWatches::Start(const std::string& cluster,
                                      const std::shared_ptr<talos::TalosClient>& client,
                                      const std::string& address, const talos::MachineStatus& seen,
                                      const std::string& boot_id_read_after, bool awaited) {
  Watch watch;
  watch.id = next_id_++;
  watch.client = client;
  watch.started = env_.Monotonic();
  watch.feed = std::make_shared<Feed>();
  {
    MutexLock feed_lock(watch.feed->mu);
    watch.feed->machine = seen;  // what the last look saw; not live until the watch says
    watch.feed->awaited = awaited;
    if (!boot_id_read_after.empty() && !seen.created.empty()) {
      watch.feed->read_after_created = seen.created;
      watch.feed->read_boot_id = boot_id_read_after;
    }
  }
  talos::StreamCallbacks<absl::StatusOr<talos::MachineStatus>> callbacks;
  callbacks.on_event = [feed = watch.feed, wake = wake_,
                        cluster](const absl::StatusOr<talos::MachineStatus>& status) {
    bool changed = false;
    {
      MutexLock lock(feed->mu);
      if (feed->ended) return;
      if (!status.ok()) {
        // Not a status to go by: the node is asked again, and not watched on this client.
        feed->live = false;
        feed->ended = true;
        feed->refused = RefusedForGood(status.status());
        feed->end = status.status();
        feed->changed.notify_all();
        return;
      }
      // Readiness is what ends a wait; the stages on the way only change what the status
      // says, and waking at each costs a look (fleet_scale_bench, docs/benchmarks.md). So does
      // a change of readiness as a node's upgrade or reboot begins (Talos checks none in those
      // stages, so a node not ready turns ready): its fall follows.
      changed = !feed->awaited && status->ready != feed->machine.ready && !Falling(status->stage);
      feed->machine = *status;
      feed->live = true;
      feed->fell = false;  // back: a fall carried over (StartAndAwait) is over
      feed->changed.notify_all();
      // The status was asked before the boot id was read, this one is sent after (the watch
      // started after the read): one instance of it means no boot in between.
      if (feed->boot_id.empty() && !status->created.empty() &&
          status->created == feed->read_after_created) {
        feed->boot_id = feed->read_boot_id;
      }
    }
    if (changed && wake) wake(cluster);
  };
  callbacks.on_done = [feed = watch.feed, wake = wake_, cluster](const absl::Status& why) {
    bool fell = false;
    {
      MutexLock lock(feed->mu);
      // A live watch that ends, not cancelled here, is its node (or the endpoint forwarding it)
      // going down: a node in flight read from it is followed by nothing else until a look
      // sees it so (RolloutReconciler::FollowInFlight).
      fell = feed->live && !absl::IsCancelled(why);
      feed->fell = feed->fell || fell;  // a fall StartAndAwait carried over stays
      feed->live = false;
      feed->refused = feed->refused || (!feed->ended && RefusedForGood(why));
      if (!feed->ended) feed->end = why;
      feed->ended = true;
      feed->changed.notify_all();
    }
    if (fell && wake) wake(cluster);
  };
  // on_done may run before StartMachineStatusWatch returns; it takes only the feed's lock.
  watch.stream = client->StartMachineStatusWatch(address, std::move(callbacks));
  return watch;
}

void NodeWatches::Ensure(const std::string& cluster, const std::string& address,
                         const std::shared_ptr<talos::TalosClient>& client,
                         const talos::MachineStatus& seen, const std::string& boot_id_read_after) {
  Watch replaced;  // destroyed after the lock is released
  MutexLock lock(mu_);
  if (stopped_) return;
  Cluster& c = clusters_[cluster];
  auto w = c.nodes.find(address);
  if (w != c.nodes.end() && w->second.client == client) {
    MutexLock feed_lock(w->second.feed->mu);
    if (!w->second.feed->ended || w->second.feed->refused) return;
  }
  if (w != c.nodes.end()) replaced = std::exchange(w->second, Watch{});
  c.nodes[address] = Start(cluster, client, address, seen, boot_id_read_after);
}

absl::StatusOr<NodeWatches::Known> NodeWatches::StartAndAwait(
    const std::string& cluster, const std::string& address,
    const std::shared_ptr<talos::TalosClient>& client, std::chrono::milliseconds within) {
  std::shared_ptr<Feed> feed;
  uint64_t id = 0;
  {
    Watch replaced;  // destroyed after the lock is released
    MutexLock lock(mu_);
    if (stopped_) return absl::CancelledError("node watches: stopped");
    Cluster& c = clusters_[cluster];
    auto w = c.nodes.find(address);
    bool starting = false;
    bool fell = false;
    bool fall_taken = false;
    if (w != c.nodes.end() && w->second.client == client) {
      MutexLock feed_lock(w->second.feed->mu);
      if (w->second.feed->refused) {
        return absl::FailedPreconditionError("the node refused its watch on this client");
      }
      starting = !w->second.feed->ended;
      fell = w->second.feed->fell;
      fall_taken = w->second.feed->fall_taken;
    }
    if (!starting) {
      if (w != c.nodes.end()) replaced = std::exchange(w->second, Watch{});
      // Not ready until the watch says: a first status that comes after the wait, ready,
      // wakes the cluster.
      Watch& started = c.nodes[address] = Start(cluster, client, address, {}, "", true);
      feed = started.feed;
      id = started.id;
      // The machine is down until this watch says otherwise: what its fall told still holds
      // (TakeFall, MachineSpeaksForNode), as it did while the fallen watch was the node's.
      MutexLock feed_lock(feed->mu);
      if (!feed->live) {
        feed->fell = fell;
        feed->fall_taken = fall_taken;
      }
    } else {  // started by another look, its first status not here yet: awaited here too
      feed = w->second.feed;
      id = w->second.id;
      MutexLock feed_lock(feed->mu);
      feed->awaited = true;
    }
  }
  MutexLock feed_lock(feed->mu);
  env_.WaitFor(feed->changed, feed_lock, {}, within,
               [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(feed->mu) { return feed->live || feed->ended; });
  feed->awaited = false;
  if (feed->live) return Known{id, feed->boot_id, feed->machine};
  if (feed->ended) {
    return feed->end.ok() ? absl::UnavailableError("the node's watch ended") : feed->end;
  }
  return absl::DeadlineExceededError("the node's watch sent no status in time");
}

std::optional<std::vector<kube::KubeNode>> NodeWatches::KubeNodes(
    const std::string& cluster, const std::shared_ptr<kube::KubeClient>& kube) {
  Informer replaced;  // destroyed after the lock is released: it joins its thread
  MutexLock lock(mu_);
  if (stopped_) return std::nullopt;
  Informer& informer = clusters_[cluster].informer;
  if (informer.nodes && informer.kube == kube) {
    return informer.nodes->NodesSince(kube->LastNodeWriteVersion());
  }
  replaced = std::move(informer);
  kube::NodeInformerOptions options;
  if (wake_) {
    options.on_change = [this, cluster](const kube::NodeWatchEvent* event) {
      if (event == nullptr || !MachineSpeaksForNode(cluster, *event)) wake_(cluster);
    };
  }
  informer.kube = kube;
  informer.nodes = std::make_unique<kube::NodeInformer>(kube, env_, std::move(options));
  // Each informer holds a thread: the futex hash keeps four buckets a thread (base/futex_hash.h).
  (void)GrowFutexHash();
  return std::nullopt;
}

bool NodeWatches::MachineSpeaksForNode(const std::string& cluster,
                                       const kube::NodeWatchEvent& event) {
  if (event.type == kube::NodeWatchEvent::Type::kDeleted) return false;
  MutexLock lock(mu_);
  auto c = clusters_.find(cluster);
  if (c == clusters_.end()) return false;
  for (const std::string& address : event.node.addresses) {
    auto w = c->second.nodes.find(address);
    if (w == c->second.nodes.end()) continue;
    Feed& feed = *w->second.feed;
    MutexLock feed_lock(feed.mu);
    const bool falling = feed.live && Falling(feed.machine.stage);
    if (feed.live && !feed.machine.ready && !falling) return true;
    if (!event.node.ready && (feed.fell || falling)) return true;
    // Ready again after the fall the watch told, with no watch since: the machine is back, and
    // a loss from now on is news.
    if (event.node.ready) feed.fell = false;
  }
  return false;
}

void NodeWatches::RecordBootId(const std::string& cluster, const std::string& address,
                               uint64_t watch, const std::string& boot_id) {
  MutexLock lock(mu_);
  auto c = clusters_.find(cluster);
  if (c == clusters_.end()) return;
  auto w = c->second.nodes.find(address);
  if (w == c->second.nodes.end() || w->second.id != watch) return;
  Feed& feed = *w->second.feed;
  MutexLock feed_lock(feed.mu);
  // A watch that ended since may have outlived the boot the id was read in.
  if (feed.live) feed.boot_id = boot_id;
}

void NodeWatches::KeepOnly(const std::string& cluster, const std::vector<std::string>& addresses) {
  std::vector<Watch> ending;  // destroyed after the lock is released: each stream waits
  MutexLock lock(mu_);
  auto c = clusters_.find(cluster);
  if (c == clusters_.end()) return;
  for (auto w = c->second.nodes.begin(); w != c->second.nodes.end();) {
    if (std::find(addresses.begin(), addresses.end(), w->first) != addresses.end()) {
      ++w;
      continue;
    }
    ending.push_back(std::move(w->second));
    w = c->second.nodes.erase(w);
  }
}

int NodeWatches::Live() const {
  MutexLock lock(mu_);
  int live = 0;
  for (const auto& [name, cluster] : clusters_) {
    for (const auto& [address, watch] : cluster.nodes) {
      MutexLock feed_lock(watch.feed->mu);
      live += watch.feed->live ? 1 : 0;
    }
  }
  return live;
}

kube::IdleCloser::Idle NodeWatches::SweepIdle(Env::TimePoint now) {
  std::vector<Watch> ending;
  std::vector<Informer> informers;
  {
    MutexLock lock(mu_);
    for (auto c = clusters_.begin(); c != clusters_.end();) {
      if (now - c->second.last_look < idle_) {
        ++c;
        continue;
      }
      for (auto& [address, watch] : c->second.nodes) ending.push_back(std::move(watch));
      informers.push_back(std::move(c->second.informer));
      c = clusters_.erase(c);
    }
  }
  const bool closed = !ending.empty() || !informers.empty();
  return closed ? kube::IdleCloser::Idle::kClosed : kube::IdleCloser::Idle::kIdle;
}

}  // namespace tr::reconciler
