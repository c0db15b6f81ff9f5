#include "reconciler/loop/node_event_wake.h"

#include <algorithm>
#include <utility>
#include <variant>

#include "base/thread_name.h"

namespace tr::reconciler {
namespace {

std::string AddressOf(const core::ClusterProfile& profile, const std::string& node) {
  for (const core::NodeSpec& spec : profile.nodes) {
    if (spec.name == node) return spec.address;
  }
  return "";
}

bool GoingDown(core::MachineStage stage) {
  return stage == core::MachineStage::kRebooting || stage == core::MachineStage::kShuttingDown;
}

}  // namespace

bool WakesCluster(const talos::MachineEvent& event) {
  if (std::holds_alternative<talos::HelloEvent>(event.payload)) return true;
  if (const auto* machine = std::get_if<talos::MachineStatusEvent>(&event.payload)) {
    return machine->status.RunningAndReady();
  }
  if (const auto* sequence = std::get_if<talos::SequenceEvent>(&event.payload)) {
    return sequence->error_code.has_value();
  }
  return false;
}

NodeEventWakeOptions NodeEventWakeOptionsFor(std::chrono::milliseconds node_poll) {
  NodeEventWakeOptions options;
  options.max_backoff = std::min(options.max_backoff, node_poll * core::kHeardPollFactor);
  options.initial_backoff = std::min(options.initial_backoff, options.max_backoff);
  return options;
}

struct NodeEventWake::Followed {
  std::string cluster;
  std::string address;
  std::shared_ptr<talos::TalosClient> talos;  // the client the follow started with
  std::atomic<bool> hearing = false;
  std::atomic<bool> stopped = false;  // set under mu
  // Used by one stream's callbacks, then by the subscribing thread before the next stream.
  int retry = 1;
  bool live = false;  // the stream in progress said hello
  // The node said it is going down (its stage REBOOTING or SHUTTING_DOWN) since it last
  // answered a subscription: a break is its reboot, not a blip.
  bool going_down = false;
  bool answered = false;  // a stream of this follow said hello
  // A stream of this follow ended: the next one replays the node's buffer (tail_events -1).
  bool resumed = false;
  Mutex mu;
  std::unique_ptr<talos::TalosStream> stream ABSL_GUARDED_BY(mu);
};

NodeEventWake::NodeEventWake(ClusterClientFactory& clients, Wake wake, Env& env,
                             NodeEventWakeOptions options)
    : clients_(clients),
      wake_(std::move(wake)),
      env_(env),
      options_(options),
      subscriber_([this](const std::stop_token& stop) {
        NameThisThread("node-events");
        Run(stop);
      }) {}

NodeEventWake::~NodeEventWake() {
  subscriber_.request_stop();
  subscriber_.join();  // no stream starts from here on
  Follows stopping;
  {
    MutexLock lock(mu_);
    for (auto& [cluster, nodes] : followed_) {
      for (auto& [node, follow] : nodes) stopping.push_back(follow);
    }
    followed_.clear();
  }
  Stop(stopping);  // outside the lock: an ending stream may be scheduling its next one
  MutexLock lock(mu_);
  due_.clear();
}

void NodeEventWake::Follow(const core::ClusterProfile& profile,
                           const std::vector<std::string>& nodes) {
  Follows stopping;
  std::vector<std::pair<std::string, std::string>> starting;  // node, address
  {
    MutexLock lock(mu_);
    stopping = TakeAllBut(profile.name, nodes);
    for (const std::string& node : nodes) {
      const std::string address = AddressOf(profile, node);
      const bool known = followed_.contains(profile.name) && followed_[profile.name].contains(node);
      if (!known && !address.empty()) starting.emplace_back(node, address);
    }
  }
  Stop(stopping);
  if (starting.empty()) return;
  // One client for each follow: asking the factory again with this copy of the profile later
  // could replace the client a newer profile of the cluster made.
  absl::StatusOr<ClusterClients> clients = clients_.ForProfile(profile);
  if (!clients.ok() || !clients->talos) return;  // the poll alone
  const Env::Instant now = env_.Monotonic();
  MutexLock lock(mu_);
  std::map<std::string, std::shared_ptr<Followed>>& followed = followed_[profile.name];
  for (const auto& [node, address] : starting) {
    if (followed.contains(node)) continue;  // a Follow of the same cluster in between
    auto follow = std::make_shared<Followed>();
    follow->cluster = profile.name;
    follow->address = address;
    follow->talos = clients->talos;
    followed.emplace(node, follow);
    due_.emplace(now, std::move(follow));
  }
  ++scheduled_;
  due_changed_.notify_all();
}

NodeEventWake::Follows NodeEventWake::TakeAllBut(const std::string& cluster,
                                                 const std::vector<std::string>& nodes) {
  Follows taken;
  auto followed = followed_.find(cluster);
  if (followed == followed_.end()) return taken;
  for (auto it = followed->second.begin(); it != followed->second.end();) {
    if (std::find(nodes.begin(), nodes.end(), it->first) != nodes.end()) {
      ++it;
      continue;
    }
    taken.push_back(std::move(it->second));
    it = followed->second.erase(it);
  }
  if (followed->second.empty()) followed_.erase(followed);
  return taken;
}

void NodeEventWake::Keep(const std::string& cluster, const std::vector<std::string>& nodes) {
  Follows stopping;
  {
    MutexLock lock(mu_);
    stopping = TakeAllBut(cluster, nodes);
  }
  Stop(stopping);
}

void NodeEventWake::Forget(const std::string& cluster) { Keep(cluster, {}); }

bool NodeEventWake::Hearing(const std::string& cluster,
                            const std::vector<std::string>& nodes) const {
  MutexLock lock(mu_);
  auto followed = followed_.find(cluster);
  if (nodes.empty() || followed == followed_.end()) return false;
  return std::all_of(nodes.begin(), nodes.end(), [&](const std::string& node) {
    auto it = followed->second.find(node);
    return it != followed->second.end() && it->second->hearing.load();
  });
}

bool NodeEventWake::IsFollowing(const std::string& cluster, const std::string& node) const {
  MutexLock lock(mu_);
  auto followed = followed_.find(cluster);
  return followed != followed_.end() && followed->second.contains(node);
}

size_t NodeEventWake::Following() const {
  MutexLock lock(mu_);
  size_t count = 0;
  for (const auto& [cluster, nodes] : followed_) count += nodes.size();
  return count;
}

void NodeEventWake::Stop(const Follows& follows) {
  for (const std::shared_ptr<Followed>& follow : follows) {
    std::unique_ptr<talos::TalosStream> stream;
    {
      MutexLock lock(follow->mu);
      follow->stopped = true;
      stream = std::move(follow->stream);
    }
    stream.reset();  // cancels it and waits for its end
    follow->hearing = false;
  }
}

void NodeEventWake::Subscribe(const std::shared_ptr<Followed>& follow) {
  Followed* const f = follow.get();  // outlives the stream: Stop waits for its end
  f->live = false;
  // A stream opened again replays what the node buffered, as talosctl resubscribes after a
  // break: a node that came back and turned ready before it opened is told so by the replay,
  // so its hello alone decides nothing (the look it woke found the node booting).
  const bool replaying = f->resumed;
  talos::EventsRequest request;
  if (replaying) request.tail_events = -1;
  talos::EventsCallbacks callbacks;
  callbacks.on_event = [this, f, replaying](const talos::MachineEvent& event) {
    const bool hello = std::holds_alternative<talos::HelloEvent>(event.payload);
    if (hello) {
      f->retry = 1;
      f->live = true;
      f->hearing = true;
      f->going_down = false;
      f->answered = true;
    }
    if (const auto* machine = std::get_if<talos::MachineStatusEvent>(&event.payload)) {
      f->going_down = GoingDown(machine->status.stage);
    }
    if (WakesCluster(event) && !(hello && replaying) && !f->stopped) wake_(f->cluster);
  };
  callbacks.on_done = [this, weak = std::weak_ptr<Followed>(follow)](const absl::Status& ended) {
    if (std::shared_ptr<Followed> alive = weak.lock()) Ended(alive, ended);
  };
  std::unique_ptr<talos::TalosStream> previous;  // ended: released after the lock
  MutexLock lock(f->mu);
  if (f->stopped) return;
  previous = std::move(f->stream);
  // Its on_done may run before it returns: Ended takes mu_, never f->mu.
  f->stream = f->talos->StartEvents(f->address, request, std::move(callbacks));
}

void NodeEventWake::Ended(const std::shared_ptr<Followed>& follow, const absl::Status& status) {
  if (follow->stopped) return;
  // Down (Unavailable at once: the endpoint cannot reach it): subscribing again, no slower than
  // the poll (NodeEventWakeOptions), is what brings the node back to its cluster: the stream it
  // opens replays, then tells, the node's ready. Any other end (refused, not allowed) leaves
  // the node to the poll, subscribed to again on the same backoff.
  follow->hearing = absl::IsUnavailable(status);
  follow->resumed = true;
  // A live stream that broke: the node may be going down, which its status should say.
  if (follow->live) wake_(follow->cluster);
  // A node that said it is going down is not back within a few hundred milliseconds (a reboot
  // stops every service, then boots): probing it before the longest wait only fails. So is one
  // down from its follow's start: a node read from its watch is handed over once it fell.
  const bool down_from_start = !follow->answered && absl::IsUnavailable(status);
  const std::chrono::milliseconds first =
      follow->going_down || down_from_start ? options_.max_backoff : options_.initial_backoff;
  const BackoffPolicy backoff{first, options_.max_backoff, 0};
  SubscribeAt(follow, env_.Monotonic() + JitteredBackoff(backoff, follow->retry++, env_));
}

void NodeEventWake::SubscribeAt(std::shared_ptr<Followed> follow, Env::Instant due) {
  MutexLock lock(mu_);
  due_.emplace(due, std::move(follow));
  ++scheduled_;
  due_changed_.notify_all();
}

void NodeEventWake::Run(const std::stop_token& stop) {
  while (!stop.stop_requested()) {
    Follows ready;
    {
      MutexLock lock(mu_);
      const uint64_t seen = scheduled_;
      const Env::Instant next = due_.empty() ? Env::kNoDeadline : due_.begin()->first;
      if (next > env_.Monotonic()) {
        env_.Wait(due_changed_, lock, stop, next,
                  [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return scheduled_ != seen; });
      }
      const Env::Instant now = env_.Monotonic();
      while (!due_.empty() && due_.begin()->first <= now) {
        ready.push_back(std::move(due_.begin()->second));
        due_.erase(due_.begin());
      }
    }
    for (const std::shared_ptr<Followed>& follow : ready) {
      if (!stop.stop_requested()) Subscribe(follow);
    }
  }
}

}  // namespace tr::reconciler
