// NodeWatches: what a look reads of the nodes of clusters looked at often, kept current by
// watches (issue 53: observe by watching, not by asking), so that a look reads it instead of
// asking each node: each node's MachineStatus (a COSI watch per node: stage, readiness, and the
// boot id read once per watch) and the cluster's Kubernetes Nodes (a NodeInformer: a list,
// then a watch).
//
// - A cluster is watched from a look that comes less than `idle` / 2 after the one before
//   (`idle`: one minute, the connections' own idle timeout), and stays watched while its looks
//   come less than `idle` apart: a cluster looked at only at its resync keeps closing its
//   connections, as before there were watches (docs/benchmarks.md, "Watches: what they cost"),
//   and one at a resync near `idle` does not start watches that are swept before its next look.
// - A look at a node with no live watch starts the node's watch and reads its first status
//   (StartAndAwait), where it asked the node for it before and started the watch after; a
//   watch is read only once it has sent the node's status. A watch ends when its node, or the
//   endpoint forwarding it, goes down (docs/talos-api.md §5): so one live watch is one boot,
//   and the boot id read while it is live stays true until it ends. Then the next look starts
//   it again (and asks the node when it does not go live).
// - A watch the node refuses (PermissionDenied, Unimplemented, an event that is not a status)
//   is not started again with the same client: that node is asked at every look, as before.
// - The Nodes are read from the informer only while it is current and holds the newest Node
//   write of the cluster's Kubernetes client (KubeClient::LastNodeWriteVersion): a look just
//   after a cordon never reads the Node from before it. Otherwise the look lists them.
// - A change of readiness the last look did not see — a node's MachineStatus ready, a Node's
//   Ready condition, a Node added or deleted — wakes its cluster (`wake`), as a node's events
//   do: a look that read the cache just before the change came would otherwise wait for the
//   next poll. So does a live watch that ends other than by its cancelling here (its node, or
//   the endpoint forwarding it, went down): a node in flight read from its watch is followed by
//   that watch alone until then (core::NodeObservation::watched). The stages on the way,
//   cordons and marks wake nothing, nor does a change of readiness as a node enters an
//   upgrade, a reboot or a shutdown (Talos checks no readiness there; its fall wakes), nor a
//   Node's change of Ready that its machine's watch speaks for: a loss once the machine went
//   down (until the Node is Ready again) or while it is going down (Kubernetes sees a machine
//   down only later, after the node lifecycle controller's grace period), and any change while
//   the machine's watch says not ready (its own ready, which waits for the Node's, wakes).
// - A cluster not looked at for `idle` has its watches cancelled (one sweep of the process's
//   IdleCloser), and its connections then close by their own idle timeout.
//
// Thread-safe. The callbacks of the watches run on the Talos client's threads and only take
// the lock of their own node's feed; the informers' take `mu_`, which is never held while an
// informer is destroyed (that joins its thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/env.h"
#include "base/mutex.h"
#include "reconciler/clients/kube/idle_closer.h"
#include "reconciler/clients/kube/kube_client.h"
#include "reconciler/clients/kube/node_informer.h"
#include "reconciler/clients/talos/talos_client.h"

namespace tr::reconciler {

class NodeWatches {
 public:
  // `wake(cluster)` runs on the Talos client's threads and on the informers': it must not
  // block.
  using Wake = std::function<void(const std::string& cluster)>;
  NodeWatches(Env& env, Wake wake, std::chrono::milliseconds idle = std::chrono::minutes(1));
  ~NodeWatches();
  NodeWatches(const NodeWatches&) = delete;
  NodeWatches& operator=(const NodeWatches&) = delete;

  // A look at `cluster` begins. True when its nodes are to be watched: the look before was
  // less than `idle` / 2 ago, or less than `idle` ago and the cluster was watched then.
  bool Looked(const std::string& cluster);

  // What a node's live watch knows.
  struct Known {
    uint64_t watch = 0;            // which watch: RecordBootId names it
    std::string boot_id;           // "" until recorded while this watch was live
    talos::MachineStatus machine;  // the last status it sent
  };
  // What the node's watch on `client` knows; nullopt when it has none live (not started, not
  // sent the status yet, ended, refused, or started on another client).
  std::optional<Known> Find(const std::string& cluster, const std::string& address,
                            const talos::TalosClient* client);
  // While the node's watch on `client` has sent no status yet (started, not ended) and began
  // less than `fresh` ago: the status the look that started it saw. A look moments after that
  // one (the same reconcile's next turn) reads it instead of asking again, as a look that came
  // that much earlier would have; the watch wakes the cluster if its first status differs in
  // readiness. nullopt otherwise.
  std::optional<talos::MachineStatus> SeenAtStart(const std::string& cluster,
                                                  const std::string& address,
                                                  const talos::TalosClient* client,
                                                  std::chrono::milliseconds fresh);
  // True once for the node's watch on `client` after it fell (ended live, not cancelled here:
  // the node, or the endpoint forwarding it, went down); false after that, and for a watch
  // that did not fall. What a look at a node in flight reads instead of asking it
  // (TalosFleetObserver::ObserveTalos).
  bool TakeFall(const std::string& cluster, const std::string& address,
                const talos::TalosClient* client);
  // A look at a node with no live watch, in a watched cluster: starts the node's watch on
  // `client` (unless one is starting there) and waits up to `within` for its first status,
  // which the look reads instead of asking the node for it: the watch would be started once the
  // node answered, and its first status is that answer (`talosctl get --watch` sends the
  // resource first). The look's own wait; the status wakes nothing. Live: what the watch knows,
  // as Find. Otherwise the status it ended with (the node is down: Unavailable; the watch
  // refused: PermissionDenied, Unimplemented, …, or refused before on this client:
  // FailedPrecondition), DeadlineExceeded when it sent nothing within `within`, Cancelled
  // after Stop.
  absl::StatusOr<Known> StartAndAwait(const std::string& cluster, const std::string& address,
                                      const std::shared_ptr<talos::TalosClient>& client,
                                      std::chrono::milliseconds within);
  // Starts the node's watch on `client`, unless one is live or starting there, or `client`
  // refused it. `seen`: the node's status as the look saw it; a watch whose first status
  // differs in readiness wakes the cluster. `boot_id_read_after`: the boot id the look read
  // after it asked for `seen` ("" for none); a watch started here whose statuses are the same
  // instance as `seen` (MachineStatus::created, one per boot) knows it as its boot's, so the
  // next look does not read it again.
  void Ensure(const std::string& cluster, const std::string& address,
              const std::shared_ptr<talos::TalosClient>& client, const talos::MachineStatus& seen,
              const std::string& boot_id_read_after = "");
  // `boot_id`, read while `watch` was live, is the node's boot for as long as that watch lasts.
  void RecordBootId(const std::string& cluster, const std::string& address, uint64_t watch,
                    const std::string& boot_id);
  // The cluster's Nodes from its informer on `kube`, when it is current and holds `kube`'s
  // newest Node write; nullopt otherwise (then the look lists them). Starts the informer on
  // `kube` when it has none there.
  std::optional<std::vector<kube::KubeNode>> KubeNodes(
      const std::string& cluster, const std::shared_ptr<kube::KubeClient>& kube);
  // Ends the watches of `cluster`'s nodes whose address is not in `addresses`.
  void KeepOnly(const std::string& cluster, const std::vector<std::string>& addresses);

  // Ends every watch, and starts none after: what `wake` calls may go away once it returns.
  void Stop();

  // How many watches are live (sent their status and not ended); for tests and benchmarks.
  int Live() const;

 private:
  struct Feed;
  struct Watch {
    uint64_t id = 0;
    std::shared_ptr<talos::TalosClient> client;
    std::shared_ptr<Feed> feed;                  // what the callbacks write
    std::unique_ptr<talos::TalosStream> stream;  // destroyed first: it waits for on_done
    Env::Instant started{};
  };
  struct Informer {
    std::shared_ptr<kube::KubeClient> kube;
    std::unique_ptr<kube::NodeInformer> nodes;  // destroyed first: it joins its thread
  };
  struct Cluster {
    Env::TimePoint last_look{};
    bool watched = false;  // what the last look was told
    std::map<std::string, Watch> nodes;  // by address
    Informer informer;
  };
  // The node's watch on `client`; null when it has none there.
  Watch* WatchLocked(const std::string& cluster, const std::string& address,
                     const talos::TalosClient* client) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `awaited`: a look waits for its first status (StartAndAwait), set before the stream starts,
  // whose first status may come at once.
  Watch Start(const std::string& cluster, const std::shared_ptr<talos::TalosClient>& client,
              const std::string& address, const talos::MachineStatus& seen,
              const std::string& boot_id_read_after, bool awaited = false)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether `event`, a Node's change of Ready, leaves alone what a look reads, and its
  // machine's watch wakes for what comes next; then it wakes nothing. A look reads a node ready
  // when its machine and its Node both are (observer.cc), so the Node's change is moot while
  // the machine's live watch says not ready: Talos counts the Node's Ready among its own
  // conditions (`nodeReady`), and the machine's ready, which wakes, follows. A loss is moot
  // too once the machine went down (its watch's end woke; until the Node is Ready again) or
  // is going down. A Node is its machine's when one of its addresses is the machine's.
  bool MachineSpeaksForNode(const std::string& cluster, const kube::NodeWatchEvent& event);
  // Cancels the watches of clusters not looked at for `idle_` (the IdleCloser's sweep).
  kube::IdleCloser::Idle SweepIdle(Env::TimePoint now);

  Env& env_;
  const Wake wake_;
  const std::chrono::milliseconds idle_;
  mutable Mutex mu_;  // never held while a stream is destroyed
  // Hashed: a look finds its cluster here once per node, in a fleet of thousands.
  std::unordered_map<std::string, Cluster> clusters_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::shared_ptr<kube::IdleCloser> closer_;
  int closer_id_ = -1;  // last: registered once everything SweepIdle uses exists
};

}  // namespace tr::reconciler
