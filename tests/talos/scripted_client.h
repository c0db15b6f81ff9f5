// A scripted TalosClient for unit tests of what is built on the client (the events follower,
// the node watches): no network, no threads of its own.
#pragma once

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "reconciler/clients/talos/talos_client.h"
#include "resource/definitions/runtime/runtime.pb.h"

namespace tr::reconciler::talos {

// A scripted stream (a watch, an Events call): its callbacks, and whether it has ended. It ends
// once, as a client's does: by the test, or Cancelled when its handle is destroyed.
template <typename Event>
struct ScriptedStream {
  StreamCallbacks<Event> callbacks;
  bool ended = false;
  void End(const absl::Status& why) {
    if (ended) return;
    ended = true;
    if (callbacks.on_done) callbacks.on_done(why);
  }
  void Deliver(const Event& event) {
    if (!ended && callbacks.on_event) callbacks.on_event(event);
  }
};
using ScriptedWatch = ScriptedStream<CosiEvent>;

template <typename Event>
class EndsWhenDestroyed final : public TalosStream {
 public:
  explicit EndsWhenDestroyed(std::shared_ptr<ScriptedStream<Event>> stream)
      : stream_(std::move(stream)) {}
  ~EndsWhenDestroyed() override { stream_->End(absl::CancelledError("cancelled")); }
  void Cancel() override {}

 private:
  std::shared_ptr<ScriptedStream<Event>> stream_;
};

// One scripted Events call: the events it delivers, then how it ends.
struct Subscription {
  std::vector<MachineEvent> events;
  absl::Status end = absl::UnavailableError("stream ended by the node");
};

// A TalosClient whose Events calls play a script, whose watches deliver what a test hands them
// (Deliver), and whose etcd calls answer what a test sets; everything else is Unimplemented.
class ScriptedClient final : public TalosClient {
 public:
  std::deque<Subscription> script;
  std::deque<absl::StatusOr<std::string>> boot_ids;
  std::vector<int32_t> tail_events;
  bool hello_delivered = false;

  absl::Status Events(const std::string&, const EventsRequest& request,
                      std::chrono::milliseconds timeout, std::stop_token stop,
                      const std::function<bool(const MachineEvent&)>& on_event) override {
    tail_events.push_back(request.tail_events);
    EXPECT_GT(timeout.count(), 0);
    if (script.empty()) return absl::DeadlineExceededError("script exhausted");
    Subscription sub = script.front();
    script.pop_front();
    for (const auto& event : sub.events) {
      if (std::holds_alternative<HelloEvent>(event.payload)) hello_delivered = true;
      if (!on_event(event)) return absl::OkStatus();
      if (stop.stop_requested()) return absl::CancelledError("cancelled");
    }
    return sub.end;
  }
  absl::StatusOr<std::string> BootId(const std::string&) override {
    if (boot_ids.empty()) return absl::UnavailableError("no boot id scripted");
    auto id = boot_ids.front();
    boot_ids.pop_front();
    return id;
  }

  // The watches started, in order; a test delivers their events with Deliver and ends them
  // with End.
  std::vector<std::shared_ptr<ScriptedWatch>> watches;
  std::unique_ptr<CosiWatch> StartWatch(const std::string&, const CosiWatchRequest&,
                                        WatchCallbacks callbacks) override {
    watches.push_back(std::make_shared<ScriptedWatch>(ScriptedWatch{std::move(callbacks)}));
    return std::make_unique<EndsWhenDestroyed<CosiEvent>>(watches.back());
  }
  void Deliver(size_t watch, const CosiEvent& event) { watches.at(watch)->Deliver(event); }
  void End(size_t watch, const absl::Status& why) { watches.at(watch)->End(why); }

  // The Events streams started with StartEvents, which may come from another thread (the
  // events follower subscribes from its own): a test waits for the n-th, then plays it.
  std::unique_ptr<TalosStream> StartEvents(const std::string&, const EventsRequest& request,
                                           EventsCallbacks callbacks) override {
    auto stream = std::make_shared<ScriptedStream<MachineEvent>>();
    stream->callbacks = std::move(callbacks);
    {
      std::lock_guard lock(events_mu_);
      event_streams_.push_back({request, stream});
    }
    events_started_.notify_all();
    return std::make_unique<EndsWhenDestroyed<MachineEvent>>(stream);
  }
  // The request of the `n`-th Events stream (from 0) and the stream, once it started (20 s at
  // most; nullptr then).
  std::pair<EventsRequest, std::shared_ptr<ScriptedStream<MachineEvent>>> EventStream(size_t n) {
    std::unique_lock lock(events_mu_);
    if (!events_started_.wait_for(lock, std::chrono::seconds(20),
                                  [&] { return event_streams_.size() > n; })) {
      return {};
    }
    return event_streams_[n];
  }

  // Etcd, as a test sets it: each node's member status (NotFound for a node without one) and
  // the cluster's member list, whose calls are counted.
  std::map<std::string, EtcdMemberStatus> etcd_status;
  std::vector<EtcdMember> etcd_members;
  int member_list_calls = 0;
  int etcd_status_calls = 0;
  absl::StatusOr<EtcdMemberStatus> EtcdStatus(const std::string& node) override {
    ++etcd_status_calls;
    auto it = etcd_status.find(node);
    if (it == etcd_status.end()) return absl::NotFoundError("no etcd member scripted");
    return it->second;
  }
  // One call for several nodes (counted), answering each as EtcdStatus would, or failing as a
  // whole with `etcd_statuses_refused` when a test sets it.
  int etcd_statuses_calls = 0;
  absl::Status etcd_statuses_refused;
  absl::StatusOr<EtcdStatusOfEach> EtcdStatuses(const std::vector<std::string>& nodes) override {
    ++etcd_statuses_calls;
    if (!etcd_statuses_refused.ok()) return etcd_statuses_refused;
    EtcdStatusOfEach each;
    for (const std::string& node : nodes) {
      auto it = etcd_status.find(node);
      each.emplace(node, it == etcd_status.end()
                             ? absl::StatusOr<EtcdMemberStatus>(
                                   absl::UnavailableError("the node was not reached"))
                             : absl::StatusOr<EtcdMemberStatus>(it->second));
    }
    return each;
  }
  absl::StatusOr<std::vector<EtcdMember>> EtcdMemberList(const std::string&) override {
    ++member_list_calls;
    return etcd_members;
  }

#define TR_UNIMPLEMENTED(signature) \
  signature override { return absl::UnimplementedError("not scripted"); }
  TR_UNIMPLEMENTED(absl::StatusOr<NodeVersion> Version(const std::string&))
  TR_UNIMPLEMENTED(absl::StatusOr<MachineStatus> GetMachineStatus(const std::string&))
  TR_UNIMPLEMENTED(absl::StatusOr<std::vector<ServiceState>> ServiceList(const std::string&))
  TR_UNIMPLEMENTED(absl::StatusOr<UpgradeAck> Upgrade(const std::string&,
                                                      const LegacyUpgradeRequest&))
  TR_UNIMPLEMENTED(absl::StatusOr<LifecycleUpgradeResult> LifecycleUpgrade(
      const std::string&, const std::string&, core::InstallerStore,
      const std::function<void(const std::string&)>&))
  TR_UNIMPLEMENTED(absl::StatusOr<ImagePullResult> PullImage(const std::string&,
                                                             core::InstallerStore,
                                                             const std::string&))
  TR_UNIMPLEMENTED(absl::Status PullImageLegacy(const std::string&, ContainerdNamespace,
                                                const std::string&))
  TR_UNIMPLEMENTED(absl::StatusOr<std::string> Reboot(const std::string&, RebootMode))
  TR_UNIMPLEMENTED(absl::StatusOr<std::string> EtcdForfeitLeadership(const std::string&))
  TR_UNIMPLEMENTED(absl::Status Rollback(const std::string&))
  TR_UNIMPLEMENTED(absl::StatusOr<ApplyConfigurationResult> ApplyConfiguration(
      const std::string&, const ApplyConfigurationRequest&))
  TR_UNIMPLEMENTED(absl::StatusOr<std::string> Kubeconfig(const std::string&))
  TR_UNIMPLEMENTED(absl::StatusOr<CosiResource> CosiGet(const std::string&, const std::string&,
                                                        const std::string&, const std::string&))
  TR_UNIMPLEMENTED(absl::StatusOr<std::vector<CosiResource>> CosiList(const std::string&,
                                                                      const std::string&,
                                                                      const std::string&))
  TR_UNIMPLEMENTED(absl::StatusOr<uint64_t> EtcdSnapshot(const std::string&,
                                                         const std::filesystem::path&))
#undef TR_UNIMPLEMENTED

 private:
  std::mutex events_mu_;
  std::condition_variable events_started_;
  std::vector<std::pair<EventsRequest, std::shared_ptr<ScriptedStream<MachineEvent>>>>
      event_streams_;
};

// A watch event of a RUNNING, ready MachineStatus made at `created`, as Talos sends it.
inline CosiEvent ReadyStatusMadeAt(const std::string& created) {
  ::talos::resource::definitions::runtime::MachineStatusSpec spec;
  spec.set_stage(::talos::resource::definitions::enums::MACHINE_STAGE_RUNNING);
  spec.mutable_status()->set_ready(true);
  CosiEvent event;
  event.type = CosiEventType::kCreated;
  event.resource.proto_spec = spec.SerializeAsString();
  event.resource.created = created;
  return event;
}

}  // namespace tr::reconciler::talos
