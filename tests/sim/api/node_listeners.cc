#include "tests/sim/api/node_listeners.h"

#include <set>

namespace tr::sim {

absl::Status NodeListeners::Add(SimCluster* cluster, SimNode* node, CertifiedKey cert,
                                std::string ca_pem) {
  auto listener = std::make_unique<Listener>(
      Listener{cluster, node, std::move(cert), std::move(ca_pem), nullptr});
  auto& pump = pumps_[cluster];
  if (!pump) pump = std::make_shared<StreamPump>(*cluster);
  auto server =
      NodeServer::Start(cluster, node, directory_, listener->cert, listener->ca_pem, pump);
  if (!server.ok()) return server.status();
  listener->server = std::move(*server);
  listeners_.push_back(std::move(listener));
  return absl::OkStatus();
}

void NodeListeners::Supervise() {
  if (!refuse_while_down_) return;
  std::set<SimCluster*> clusters;
  for (const auto& l : listeners_) clusters.insert(l->cluster);
  for (SimCluster* c : clusters) threads_.emplace_back([this, c] { SuperviseCluster(c); });
}

void NodeListeners::SuperviseCluster(SimCluster* cluster) {
  while (!stopping_) {
    // Which listeners must change: decided under the lock, done outside it (a server shutdown
    // waits for handlers that take the lock).
    std::vector<std::pair<Listener*, bool>> changes;
    {
      std::unique_lock lock(cluster->mu());
      for (auto& l : listeners_) {
        if (l->cluster != cluster) continue;
        const bool want = l->node->api_reachable();
        if (want != (l->server != nullptr)) changes.emplace_back(l.get(), want);
      }
      if (changes.empty()) {
        cluster->cv().wait_for(lock, std::chrono::milliseconds(20));
        continue;
      }
    }
    for (auto& [l, want] : changes) {
      if (!want) {
        l->server->Shutdown();
        l->server.reset();
        continue;
      }
      auto server =
          NodeServer::Start(cluster, l->node, directory_, l->cert, l->ca_pem, pumps_.at(cluster));
      if (server.ok()) l->server = std::move(*server);  // else retried on the next round
    }
  }
}

void NodeListeners::Stop() {
  stopping_ = true;
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
  for (auto& l : listeners_) {
    if (l->server) l->server->Shutdown();
  }
  listeners_.clear();
  pumps_.clear();  // after the servers: their streams have ended
}

}  // namespace tr::sim
