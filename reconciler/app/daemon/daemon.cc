#include "reconciler/app/daemon/daemon.h"

#include <sys/resource.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <optional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "base/futex_hash.h"
#include "base/signal_stop.h"
#include "base/thread_name.h"
#include "core/shards.h"
#include "gitsource/git_source.h"
#include "gitsource/proposal_branch.h"
#include "gitsource/status_writer.h"
#include "reconciler/app/daemon/forge_wiring.h"
#include "reconciler/app/daemon/release_sources.h"
#include "reconciler/clients/cluster_clients.h"
#include "reconciler/clients/factory/factory_installers.h"
#include "reconciler/clients/factory/image_factory.h"
#include "reconciler/clients/http/http_server.h"
#include "reconciler/clients/http/rendered_text.h"
#include "reconciler/features/k8s_job/job_daemon.h"
#include "reconciler/features/lease/election.h"
#include "reconciler/features/lease/fencing.h"
#include "reconciler/features/notify/notifier_factory.h"
#include "reconciler/features/notify/notifying_status_store.h"
#include "reconciler/features/plan/plan_engine.h"
#include "reconciler/features/proposals/proposer.h"
#include "reconciler/loop/controller.h"
#include "reconciler/loop/desired_state.h"
#include "reconciler/loop/node_event_wake.h"
#include "reconciler/loop/rollout_reconciler.h"
#include "reconciler/loop/source_poller.h"
#include "reconciler/loop/status_store.h"
#include "reconciler/operations/background_steps.h"
#include "reconciler/operations/executor.h"
#include "reconciler/operations/gates/health_gate_runner.h"
#include "reconciler/operations/observer.h"
#include "reconciler/runtime/logging.h"
#include "reconciler/runtime/metrics.h"
#include "reconciler/runtime/process_metrics.h"
#include "reconciler/runtime/version.h"

namespace tr::reconciler {
namespace {

using Log = std::shared_ptr<spdlog::logger>;
using std::chrono::system_clock;

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

// /healthz, /readyz and /metrics on a server of their own (reconciler/clients/http), so that load
// on the webhook port never delays a probe; stopped on destruction, on every path out of
// RunDaemon.
class HttpEndpoints {
 public:
  // Binds `config.listen` and serves. False when the address cannot be bound.
  // `extra_metrics`, when set, adds its text to /metrics (leader election's gauges).
  bool Start(const DaemonConfig& config, Metrics& metrics, Env& env, const Log& log,
             std::function<std::string()> extra_metrics = {}) {
    const system_clock::time_point started = env.Now();
    http::ServerOptions options;
    options.name = "endpoints";
    options.listen = config.listen;
    options.limits = http::ProbeEndpointLimits();
    options.on_refused = [&metrics](http::RefusalReason reason) {
      metrics.endpoint_refused.Inc(http::RefusalReasonName(reason));
    };
    // One rendering of /metrics shared by the connections reading it at once.
    metrics_text_ = std::make_unique<http::RenderedText>(
        [&metrics, extra_metrics] {
          return metrics.RenderPrometheus() + RenderProcessMetrics() +
                 (extra_metrics ? extra_metrics() : "");
        },
        kMetricsMaxAge, env);
    // The probes also get the connections held for them when the rest are taken.
    options.routes = {
        {"GET", "/healthz",
         [&, started](const http::Request&) -> http::Response {
           const bool live = metrics.Live(started, env.Now(), config.unhealthy_after);
           if (live) return {200, "text/plain", "ok\n"};
           return {503, "text/plain", "stuck: no successful poll or reconcile lately\n"};
         },
         /*probe=*/true},
        {"GET", "/readyz",
         [&metrics](const http::Request&) -> http::Response {
           if (metrics.ready) return {200, "text/plain", "ready\n"};
           return {503, "text/plain", "waiting for the first poll\n"};
         },
         /*probe=*/true},
        {"GET", "/metrics",
         [text = metrics_text_.get()](const http::Request&) -> http::Response {
           return {200, "text/plain; version=0.0.4", "", text->Get()};
         }},
    };
    auto server = http::HttpServer::Start(std::move(options), env);
    if (!server.ok()) {
      log->error("step=listen address={} error={}", LogValue(config.listen),
                 LogValue(Msg(server.status())));
      return false;
    }
    server_ = *std::move(server);
    return true;
  }

 private:
  // Slow readers of /metrics share a rendering at most this old.
  static constexpr std::chrono::seconds kMetricsMaxAge{1};
  std::unique_ptr<http::RenderedText> metrics_text_;
  std::unique_ptr<http::HttpServer> server_;  // last: stopped before the text goes
};

// Marks progress on the metrics whenever a reconcile ends, whatever its outcome: a process
// whose reconciles keep finishing is not stuck.
class ProgressMarkingReconciler final : public ClusterReconciler {
 public:
  ProgressMarkingReconciler(ClusterReconciler& inner, Metrics& metrics, Env& env)
      : inner_(inner), metrics_(metrics), env_(env) {}
  ReconcileOutcome Reconcile(const std::string& cluster, std::stop_token stop) override {
    ReconcileOutcome outcome = inner_.Reconcile(cluster, stop);
    metrics_.MarkProgress(env_.Now());
    return outcome;
  }

 private:
  ClusterReconciler& inner_;
  Metrics& metrics_;
  Env& env_;
};

// The start-up failures: exit code 1 with the reason logged.
int FailStart(const Log& log, const absl::Status& status) {
  log->critical("step=start error={}", LogValue(Msg(status)));
  return 1;
}

// The daemon's threads that are not reconcile workers nor gRPC's, about: listeners, pollers,
// the stream queues, timers, log and status writers.
constexpr int kThreadsBesideWorkers = 64;

// Settings of the whole process for a long-running daemon of `workers` reconcile workers.
void TuneProcess(int workers) {
  // The listeners hold up to 1,170 connections each (http::ConnectionCapFor; --listen 8 more
  // for probes) besides Git, gRPC and HTTP clients: the soft descriptor limit (1,024 on many
  // hosts) goes up to the hard one.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
#ifdef NDEBUG
  // gRPC locks absl::Mutex on every call, and Debian's abseil checks the lock order each time
  // (a graph of every mutex): 6% of an idle daemon's CPU. The order is gRPC's own, which its
  // tests check; debug builds keep the check.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  // Every worker and about as many threads of gRPC's, the listeners' and the streams' wait on
  // futexes: a hash sized for them (each Nodes watch started later grows it; NodeWatches).
  // Without a private hash (Linux before 6.16) the system-wide one serves: nothing to do.
  (void)GrowFutexHash(2 * workers + kThreadsBesideWorkers);
}

// One run of `talos-reconciler run`. Start-up has four named parts, each building on the
// one before; members are declared in the order they are made, so that everything is destroyed
// after what uses it (and the threads, declared last of their part, stop first).
//
// The status chain, from the branch outwards (StartStatusChain, then StartReconciler):
//   git_store_   the status branch itself; start-up, promotion and replicas read it as it is
//   notifying_   + a notification for each change of phase (--notify)
//   forge_       + the forge's pull-request comment and rollout status (--forge)
//   fenced_store_ + with --leader-elect, proof that the cluster's shard is still held
// The reconciler writes to the outermost.
class Daemon {
 public:
  explicit Daemon(const DaemonConfig& config)
      : config_(config), log_(ModuleLogger("daemon")), env_(Env::Default()) {}

  // The process exit code: 0 after a clean stop, 1 when start-up fails.
  int Run() {
    if (absl::Status s = StartStatusChain(); !s.ok()) return FailStart(log_, s);
    if (absl::Status s = StartInbound(); !s.ok()) return FailStart(log_, s);
    const BackoffPolicy load_backoff{std::chrono::seconds(1), std::chrono::seconds(30),
                                     /*max_attempts=*/0};  // unused: until stopped
    auto statuses = LoadStatusesAtStart(*store_, load_backoff, env_, signals_.token());
    if (!statuses.ok()) {
      if (absl::IsCancelled(statuses.status())) return 0;
      return FailStart(log_, statuses.status());
    }
    log_->info(
        "step=start version={} commit={} repo-branch={} status-branch={} clusters-with-status={} "
        "dry-run={}",
        ReconcilerVersion(), GetBuildStamp().commit, config_.git.branch, config_.status_branch,
        statuses->size(), config_.dry_run);
    if (absl::Status s = StartReconciler(*std::move(statuses)); !s.ok()) {
      return FailStart(log_, s);
    }
    StartController();
    StartProposer();
    {
      std::jthread polling([this] { poller_->Run(signals_.token()); });
      std::jthread listing_releases([this] {  // never holds up a reconcile
        if (!releases_) return;
        releases_->Run(signals_.token(), [this] { EnqueueClusters([](const auto&) { return true; }); });
      });
      std::jthread proposing([this] {
        if (proposer_) proposer_->Run(signals_.token());  // never acts, never holds up
      });
      controller_->Run(signals_.token());
    }
    observer_->StopWatching();  // its watches wake clusters through controller_
    if (election_) election_->Stop();  // nothing acts any more: give the Leases back
    log_->info("step=stop");
    return 0;
  }

 private:
  // The Git source, the status writer and the chain up to the forge's reports, and leader
  // election (which the forge asks whether this replica reports rollouts).
  absl::Status StartStatusChain() {
    if (absl::Status s = gitsource::ConfigureLibgit2(Libgit2SettingsOf(config_)); !s.ok()) {
      return s;
    }
    auto source = gitsource::LibGitSource::Open(config_.git, env_);
    if (!source.ok()) return source.status();
    source_ = *std::move(source);
    for (const std::string& removed : source_->mirror_repairs()) {
      log_->warn("step=repair-mirror removed={}", LogValue(removed));
    }
    auto election = lease::Election::Open(config_.leader_election, config_.kubeconfig, env_);
    if (!election.ok()) return election.status();
    election_ = *std::move(election);
    gitsource::StatusWriterConfig writer_config;
    writer_config.branch = config_.status_branch;
    writer_config.read_limits =
        gitsource::StatusReadLimitsFor(config_.git.snapshot_limits.max_files);
    writer_config.author_name = config_.status_author_name;
    writer_config.author_email = config_.status_author_email;
    writer_config.coalesce_window = config_.status_commit_window;
    // A node's completion, an etcd snapshot and the next node's write-ahead record come one
    // after the other between two nodes; under load the commits are still a window apart.
    writer_config.coalesce_burst = 3;
    if (election_) {  // no record lands over a newer holder's (fencing.h)
      fences_.emplace(election_->elector(), election_->elector().options().identity);
      writer_config.guard = lease::StatusFileGuard;
    }
    auto writer = gitsource::GitStatusWriter::Create(*source_, writer_config, env_);
    if (!writer.ok()) return writer.status();
    writer_ = *std::move(writer);
    git_store_.emplace(*writer_, &metrics_);
    auto notifier = notify::StartNotifier(  // --notify; spooled, never blocking
        config_.notify, {.spool_dir = config_.state_dir / "notifications"}, metrics_, env_);
    if (!notifier.ok()) return notifier.status();
    notifier_ = *std::move(notifier);
    notifying_.emplace(*git_store_, *notifier_);
    std::function<bool()> reports_rollouts;  // with several replicas, the holder of shard 0 only
    if (election_) {
      reports_rollouts = [this] { return election_->elector().Holding(0, env_.Now()).has_value(); };
    }
    // The release list starts with the reconciler, after this: until then none is broken.
    auto broken = [this] {
      const releases::ReleaseCache* releases = releases_ready_.load();
      return releases ? releases->Broken() : std::vector<core::Version>{};
    };
    auto forge = ForgeReporting::Start(config_, *source_, *notifying_, *git_store_,
                                       std::move(reports_rollouts), installers_,
                                       std::move(broken), desired_, env_);
    if (!forge.ok()) return forge.status();  // --forge
    forge_ = *std::move(forge);
    store_ = forge_ ? &forge_->store() : static_cast<StatusStore*>(&*notifying_);
    return absl::OkStatus();
  }

  // /healthz, /readyz and /metrics; the webhook listener and the thread that dispatches its
  // deliveries (a push polls at once; pull requests go to the forge's flow).
  absl::Status StartInbound() {
    std::function<std::string()> election_metrics;
    if (election_) election_metrics = [this] { return election_->RenderPrometheus(env_); };
    if (!endpoints_.Start(config_, metrics_, env_, log_, election_metrics)) {
      return absl::UnavailableError("cannot listen on --listen " + config_.listen);
    }
    webhook_queue_.emplace(static_cast<size_t>(config_.webhooks.queue));
    auto webhooks = StartWebhookListener(config_, *webhook_queue_, metrics_, env_);
    if (!webhooks.ok()) return webhooks.status();
    webhooks_ = *std::move(webhooks);
    webhook_dispatcher_ = std::jthread([this](std::stop_token own) {
      NameThisThread("webhook-queue");
      DispatchWebhooks(*webhook_queue_, poll_now_, forge_ ? &forge_->flow() : nullptr, own);
    });
    return absl::OkStatus();
  }

  // The Talos clients, observer and executor, the fences of leader election, the rollout
  // reconciler and its Kubernetes upgrades (in process or as Jobs).
  absl::Status StartReconciler(std::map<std::string, core::ClusterStatus> statuses) {
    talos::GrpcTalosClientOptions talos_options;
    talos_options.shutdown = signals_.token();
    clients_.emplace(TalosCredentials{config_.credentials_dir, config_.talosconfig}, talos_options,
                     env_);
    clients_->OnClientCertificate(
        [this](const std::string& cluster, std::chrono::system_clock::time_point not_after) {
          metrics_.client_certificate_expiry.Set(
              cluster, std::chrono::duration<double>(not_after.time_since_epoch()).count());
        });
    // A watched node's change of readiness wakes its cluster, as its events do: changes the
    // next look reads (Controller::EnqueueChange).
    if (config_.no_node_watches) {
      observer_.emplace(*clients_, config_.node_name);
    } else {
      observer_.emplace(*clients_, config_.node_name, env_,
                        [this](const std::string& c) { controller_->EnqueueChange(c); });
    }
    executor_.emplace(*clients_,
                      ExecutorOptions{config_.state_dir / "etcd-snapshots",
                                      {config_.drain_timeout, std::chrono::seconds(2)},
                                      config_.etcd_snapshots_keep},
                      env_);
    // With leader election every node operation first proves the shard is still held.
    RolloutExecutor* executor = &*executor_;
    StatusStore* acting_store = store_;
    if (election_) {
      fenced_executor_.emplace(*executor_, *fences_);
      fenced_store_.emplace(*store_, *fences_);
      executor = &*fenced_executor_;
      acting_store = &*fenced_store_;
    }
    // Pulls, installs, drains, snapshots; a finished one wakes its cluster to collect it.
    background_.emplace(*executor, [this](const std::string& c) { controller_->Enqueue(c); });
    gate_runner_.emplace(*clients_);
    releases_ = OpenReleaseCache(config_, env_);  // by the flag that turns a source on
    if (releases_) releases_ready_.store(&*releases_);
    // The events of a node in flight wake its cluster before the node poll. A node it hears
    // is polled less often, also while it is down: it subscribes again at least as often as
    // that poll would look.
    const NodeEventWakeOptions events = NodeEventWakeOptionsFor(config_.node_poll_interval);
    node_events_.emplace(
        *clients_, [this](const std::string& c) { controller_->EnqueueChange(c); }, env_, events);
    // Promotion reads the upstream clusters from the branch itself (the plain store: no
    // notifications), so a cluster another replica reconciles counts too.
    reconciler_.emplace(
        RolloutReconciler::Deps{desired_, *observer_, *background_, *acting_store, env_, metrics_,
                                &*gate_runner_, &*git_store_, releases_ ? &*releases_ : nullptr,
                                &installers_.resolver(),
                                [this](const std::string& c) { return proposal_board_.For(c); },
                                &*node_events_},
        RolloutReconcilerOptions{config_.node_poll_interval, config_.dry_run, 32},
        std::move(statuses));
    return StartKubernetesUpgrades();
  }

  absl::Status StartKubernetesUpgrades() {
    k8s_upgrade::InProcessRunnerOptions options;
    options.poll_interval = std::min(config_.node_poll_interval, std::chrono::milliseconds(1000));
    options.prune_manifests = !config_.kubernetes_manifests_no_prune;
    if (election_) {  // a deposed replica's running upgrade stops before its next change
      options.may_change = [&fences = *fences_](const std::string& c) {
        return lease::CheckFenced(fences, c);
      };
    }
    if (config_.kubernetes_upgrade_mode == "inprocess") {
      kubernetes_upgrades_ =
          std::make_unique<k8s_upgrade::InProcessUpgradeRunner>(*clients_, env_, options);
    } else if (config_.kubernetes_upgrade_mode == "job") {
      auto opened = k8s_job::OpenJobUpgrades(config_.upgrade_jobs, config_.kubeconfig,
                                             config_.node_poll_interval, env_, options.may_change,
                                             options.prune_manifests);
      if (!opened.ok()) return opened.status();
      kubernetes_upgrades_ = *std::move(opened);
    }
    if (kubernetes_upgrades_) reconciler_->SetKubernetesUpgrades(kubernetes_upgrades_.get());
    return absl::OkStatus();
  }

  // Reconciles now the clusters of the desired profiles that `which` picks: every one when a
  // release is learned or marked broken (it shows in every status, and stops a rollout before
  // its next node, without waiting for the resync), a shard's when it is taken.
  void EnqueueClusters(const std::function<bool(const core::ClusterProfile&)>& which) {
    std::shared_ptr<const DesiredSnapshot> now = desired_.Current();
    if (!now) return;
    for (const core::ClusterProfile& p : now->profiles.profiles) {
      if (which(p)) controller_->Enqueue(p.name);
    }
  }

  // True while a cluster of `shard` has a node mid-operation: the shard is not given back then.
  bool OperationInFlight(int shard) const {
    std::shared_ptr<const DesiredSnapshot> now = desired_.Current();
    if (!now) return false;
    for (const core::ClusterProfile& p : now->profiles.profiles) {
      if (core::ShardOf(p.name, p.shard, config_.shards()) == shard &&
          reconciler_->OperationInFlight(p.name)) {
        return true;
      }
    }
    return false;
  }

  // Release proposals (--propose-interval), made by the replica that reports rollouts.
  void StartProposer() {
    if (config_.propose_interval.count() == 0) return;
    publisher_.emplace(*source_, config_.status_branch,
                       gitsource::ProposalIdentity{config_.status_author_name,
                                                   config_.status_author_email},
                       env_, config_.state_dir / "proposal-commits");
    std::function<bool()> proposes;
    if (election_) {
      proposes = [this] { return election_->elector().Holding(0, env_.Now()).has_value(); };
    }
    proposals::PlanMarkdown plan = [this](const std::vector<core::SourceFile>& proposed,
                                          const std::vector<core::SourceFile>& trusted) {
      return PreviewPlan(proposed, trusted, {config_.credentials_dir, config_.talosconfig},
                         config_.node_name, env_, config_.kubernetes_upgrade_mode == "inprocess",
                         config_.shards() > 1 ? config_.shards() : 0, &installers_,
                         releases_ ? releases_->Broken() : std::vector<core::Version>{})
          .markdown;
    };
    proposer_.emplace(
        proposals::ProposerDeps{desired_, *source_, *git_store_, *publisher_,
                                forge_ ? &forge_->api() : nullptr,
                                releases_ ? &*releases_ : nullptr, std::move(proposes),
                                std::move(plan), metrics_, env_, &proposal_board_},
        proposals::ProposerOptions{config_.propose_interval, config_.git.branch,
                                   {"talos-reconciler"}});
  }

  // The controller and the poller; with leader election, the shards (a shard just taken has
  // its clusters reconciled at once).
  void StartController() {
    ClusterReconciler* inner = &*reconciler_;
    if (election_) {
      election_->elector().PinnedShards([this](const std::string& cluster) {
        std::optional<int> pin;
        if (std::shared_ptr<const DesiredSnapshot> now = desired_.Current()) {
          for (const core::ClusterProfile& p : now->profiles.profiles) {
            if (p.name == cluster) pin = p.shard;
          }
        }
        return pin;
      });
      election_->elector().OperationsInFlight(
          [this](int shard) { return OperationInFlight(shard); });
      sharded_.emplace(
          *reconciler_, *fences_, *git_store_,
          [this](const std::string& cluster, std::optional<core::ClusterStatus> recorded) {
            reconciler_->Adopt(cluster, std::move(recorded));
          },
          [this](const std::string& cluster) { node_events_->Forget(cluster); });
      inner = &*sharded_;
    }
    marking_.emplace(*inner, metrics_, env_);
    ControllerOptions controller_options;
    controller_options.workers = config_.workers;
    controller_options.resync = config_.resync;
    controller_.emplace(controller_options, *marking_, env_);
    const int shards = config_.shards() > 1 ? config_.shards() : 0;
    poller_.emplace(SourcePollerOptions{config_.poll_interval, config_.poll_jitter, shards},
                    SourcePollerDeps{*source_, desired_,
                                     [this](const std::string& c) { controller_->Enqueue(c); },
                                     metrics_, env_, &poll_now_});
    if (!election_) return;
    election_->Start([this](int shard) {
      EnqueueClusters([&](const core::ClusterProfile& p) {
        return core::ShardOf(p.name, p.shard, config_.shards()) == shard;
      });
    });
  }

  const DaemonConfig& config_;
  const Log log_;
  Env& env_;
  // SIGTERM, SIGINT: everything running stops; past --shutdown-timeout, or at a second
  // signal, the process exits at once.
  SignalStop signals_{{.exit_code = 2,
                       .grace = config_.shutdown_timeout,
                       .on_stop =
                           [grace = config_.shutdown_timeout] {
                             ModuleLogger("daemon")->info("step=stopping grace={}s", grace.count());
                           },
                       .on_exit =
                           [grace = config_.shutdown_timeout](ForcedExit why) {
                             if (why == ForcedExit::kSecondSignal) {
                               ModuleLogger("daemon")->warn(
                                   "step=stop outcome=forced error=\"a second signal; exiting "
                                   "without waiting for the stop\"");
                             } else {
                               ModuleLogger("daemon")->error(
                                   "step=stop error=\"did not stop within {}s; exiting\"",
                                   grace.count());
                             }
                             spdlog::shutdown();
                           }},
                      env_};
  // Schematic IDs kept in the state directory; every factory asked with the --image-factory-*
  // options. Made first: the reconciler resolves installers with it, and so do the pull request
  // plans of forge_.
  factory::FactoryInstallers installers_{config_.image_factory, config_.state_dir / "schematic-ids",
                                         "with the daemon's --image-factory"};
  // StartStatusChain
  std::unique_ptr<gitsource::LibGitSource> source_;
  std::unique_ptr<gitsource::GitStatusWriter> writer_;
  Metrics metrics_;
  std::optional<GitStatusStore> git_store_;
  std::unique_ptr<notify::Notifier> notifier_;
  std::optional<notify::NotifyingStatusStore> notifying_;
  std::unique_ptr<lease::Election> election_;
  std::optional<lease::ClusterFences> fences_;  // with leader election
  std::unique_ptr<ForgeReporting> forge_;
  StatusStore* store_ = nullptr;  // the outermost of the chain so far
  // StartInbound
  HttpEndpoints endpoints_;
  PollTrigger poll_now_{env_};  // --webhook-listen: a verified push polls at once
  std::optional<webhooks::WebhookQueue> webhook_queue_;
  std::unique_ptr<webhooks::WebhookReceiver> webhooks_;
  std::jthread webhook_dispatcher_;
  // StartReconciler
  std::optional<TalosconfigClientFactory> clients_;
  std::optional<TalosFleetObserver> observer_;
  std::optional<TalosRolloutExecutor> executor_;
  std::optional<lease::FencedExecutor> fenced_executor_;
  std::optional<lease::FencedStatusStore> fenced_store_;
  DesiredState desired_;
  std::optional<gates::ProbeGateRunner> gate_runner_;
  std::unique_ptr<releases::ReleaseCache> releases_;
  // releases_ once it is set up: the pull-request flow reads it from its own thread.
  std::atomic<const releases::ReleaseCache*> releases_ready_{nullptr};
  std::optional<RolloutReconciler> reconciler_;
  std::unique_ptr<k8s_upgrade::KubernetesUpgradeRunner> kubernetes_upgrades_;
  // StartController
  std::optional<lease::ShardedReconciler> sharded_;
  std::optional<ProgressMarkingReconciler> marking_;
  std::optional<Controller> controller_;
  std::optional<SourcePoller> poller_;
  // Made in StartReconciler, declared here: its threads wake clusters through controller_, so
  // they are stopped before it is gone.
  std::optional<NodeEventWake> node_events_;
  std::optional<BackgroundSteps> background_;  // the same: a finished step wakes its cluster
  // StartProposer
  std::optional<gitsource::GitProposalPublisher> publisher_;
  std::optional<proposals::Proposer> proposer_;
  proposals::ProposalBoard proposal_board_;  // read by the reconciler: each status names its
};

}  // namespace

int RunDaemon(const DaemonConfig& config) {
  TuneProcess(config.workers);
  ConfigureLogging(config.log_level, config.log_format);
  return Daemon(config).Run();
}

}  // namespace tr::reconciler
