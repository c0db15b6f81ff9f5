#include "reconciler/features/lease/election.h"

#include "base/thread_name.h"
#include "fmt/format.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler::lease {

absl::StatusOr<std::unique_ptr<Election>> Election::Open(const LeaderElectionFlags& flags,
                                                        const std::filesystem::path& kubeconfig,
                                                        Env& env) {
  if (!flags.enabled) return nullptr;
  ShardElectorOptions options;
  options.lease_name = flags.name;
  options.identity = flags.identity;
  options.shards = flags.shards;
  options.timings = {flags.lease_duration, flags.renew_deadline, flags.retry_period};
  if (absl::Status s = ValidateTimings(options.timings); !s.ok()) return s;
  // No shutdown token: the Leases are given back after the shutdown began. Every call ends
  // within the renew deadline.
  kube::HttpKubeClientOptions http;
  http.connect_timeout = std::min(std::chrono::milliseconds(5000), options.timings.renew_deadline);
  http.request_timeout = options.timings.renew_deadline;
  absl::StatusOr<LeaseEndpoint> endpoint = OpenLeaseEndpoint(kubeconfig, http, env);
  if (!endpoint.ok()) return endpoint.status();
  if (!flags.namespace_name.empty()) endpoint->namespace_name = flags.namespace_name;
  return std::unique_ptr<Election>(new Election(*std::move(endpoint), options, env));
}

Election::Election(LeaseEndpoint endpoint, ShardElectorOptions options, Env& env)
    : endpoint_(std::move(endpoint)),
      leases_(std::make_unique<LeaseClient>(*endpoint_.client, endpoint_.namespace_name)),
      elector_(std::make_unique<ShardElector>(*leases_, std::move(options), env)) {}

void Election::Start(std::function<void(int shard)> on_acquired) {
  elector_->OnAcquired(std::move(on_acquired));
  ModuleLogger("lease")->info("step=elect namespace={} lease={} identity={} shards={}",
                              LogValue(leases_->namespace_name()),
                              LogValue(elector_->options().lease_name),
                              LogValue(elector_->options().identity), elector_->shards());
  thread_ = std::jthread([this](std::stop_token stop) {
    NameThisThread("lease");
    elector_->Run(stop);
  });
}

void Election::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

std::string Election::RenderPrometheus(Env& env) const {
  const std::vector<int> held = elector_->Held(env.Now());
  std::string out =
      "# HELP talos_reconciler_leader Whether this replica holds at least one shard's Lease.\n"
      "# TYPE talos_reconciler_leader gauge\n";
  out += fmt::format("talos_reconciler_leader {}\n", held.empty() ? 0 : 1);
  out +=
      "# HELP talos_reconciler_shard_owned Whether this replica holds the Lease of the shard.\n"
      "# TYPE talos_reconciler_shard_owned gauge\n";
  for (int i = 0; i < elector_->shards(); ++i) {
    const bool owned = std::find(held.begin(), held.end(), i) != held.end();
    out += fmt::format("talos_reconciler_shard_owned{{shard=\"{}\"}} {}\n", i, owned ? 1 : 0);
  }
  return out;
}

}  // namespace tr::reconciler::lease
