#include "reconciler/loop/node_event_wake.h"

#include <algorithm>
#include <utility>
#include <variant>

namespace tr::reconciler {
namespace {

std::string AddressOf(const core::ClusterProfile& profile, const std::string& node) {
  for (const core::NodeSpec& spec : profile.nodes) {
    if (spec.name == node) return spec.address;
  }
  return "";
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

NodeEventWake::NodeEventWake(ClusterClientFactory& clients, Wake wake, Env& env,
                             NodeEventWakeOptions options)
    : clients_(clients), wake_(std::move(wake)), env_(env), options_(options) {}

NodeEventWake::~NodeEventWake() {
  std::map<std::string, std::map<std::string, Followed>> stopping;
  {
    MutexLock lock(mu_);
    stopping.swap(threads_);
    count_ = 0;
  }
  // Joined here, outside the lock: a thread may be waking a cluster.
}

void NodeEventWake::Follow(const core::ClusterProfile& profile,
                           const std::vector<std::string>& nodes) {
  std::vector<Followed> stopping;  // joined after the lock
  MutexLock lock(mu_);
  std::map<std::string, Followed>& followed = threads_[profile.name];
  for (auto it = followed.begin(); it != followed.end();) {
    if (std::find(nodes.begin(), nodes.end(), it->first) != nodes.end()) {
      ++it;
      continue;
    }
    stopping.push_back(std::move(it->second));
    it = followed.erase(it);
    --count_;
  }
  for (const std::string& node : nodes) {
    const std::string address = AddressOf(profile, node);
    if (followed.contains(node) || address.empty() || count_ >= options_.max_nodes) continue;
    Followed follow;
    follow.thread = std::jthread(
        [this, profile, address, hearing = follow.hearing.get()](std::stop_token stop) {
          FollowNode(profile, address, *hearing, stop);
        });
    followed.emplace(node, std::move(follow));
    ++count_;
  }
  if (followed.empty()) threads_.erase(profile.name);
}

void NodeEventWake::Forget(const std::string& cluster) {
  std::map<std::string, Followed> stopping;  // joined after the lock
  MutexLock lock(mu_);
  auto it = threads_.find(cluster);
  if (it == threads_.end()) return;
  count_ -= it->second.size();
  stopping.swap(it->second);
  threads_.erase(it);
}

bool NodeEventWake::Hearing(const std::string& cluster,
                            const std::vector<std::string>& nodes) const {
  MutexLock lock(mu_);
  auto followed = threads_.find(cluster);
  if (nodes.empty() || followed == threads_.end()) return false;
  return std::all_of(nodes.begin(), nodes.end(), [&](const std::string& node) {
    auto it = followed->second.find(node);
    return it != followed->second.end() && it->second.hearing->load();
  });
}

size_t NodeEventWake::Following() const {
  MutexLock lock(mu_);
  return count_;
}

void NodeEventWake::FollowNode(const core::ClusterProfile& profile, const std::string& address,
                               std::atomic<bool>& hearing, std::stop_token stop) {
  // One client for the whole follow: asking the factory again with this copy of the profile
  // could replace the client a newer profile of the cluster made.
  absl::StatusOr<ClusterClients> clients = clients_.ForProfile(profile);
  if (!clients.ok() || !clients->talos) return;  // the poll alone
  const std::shared_ptr<talos::TalosClient> talos = clients->talos;
  const BackoffPolicy backoff{options_.initial_backoff, options_.max_backoff, 0};
  int retry = 1;
  while (!stop.stop_requested()) {
    bool live = false;
    const absl::Status ended = talos->Events(
        address, talos::EventsRequest{}, options_.stream_timeout, stop,
        [&](const talos::MachineEvent& event) {
          if (std::holds_alternative<talos::HelloEvent>(event.payload)) {
            retry = 1;
            live = true;
            hearing = true;
          }
          if (WakesCluster(event)) wake_(profile.name);
          return !stop.stop_requested();
        });
    // Down (Unavailable at once: the endpoint cannot reach it): subscribing again below, no
    // slower than the poll (NodeEventWakeOptions), is what brings the node back to its
    // cluster, with the hello of the stream it opens. Any other end (no answer within the
    // deadline, refused, not allowed) leaves the node to the poll.
    hearing = absl::IsUnavailable(ended);
    // A live stream that broke: the node may be going down, which its status should say.
    if (live && !stop.stop_requested()) wake_(profile.name);
    if (!env_.SleepFor(JitteredBackoff(backoff, retry++, env_), stop)) return;
  }
  hearing = false;
}

}  // namespace tr::reconciler
