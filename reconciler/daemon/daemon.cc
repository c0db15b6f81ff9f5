#include "reconciler/daemon/daemon.h"

#include <sys/resource.h>

#include <csignal>
#include <cstdlib>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "core/shards.h"
#include "gitsource/git_source.h"
#include "gitsource/status_writer.h"
#include "reconciler/background_steps.h"
#include "reconciler/cluster_clients.h"
#include "reconciler/controller.h"
#include "reconciler/desired_state.h"
#include "reconciler/executor.h"
#include "reconciler/daemon/forge_wiring.h"
#include "reconciler/gates/health_gate_runner.h"
#include "reconciler/http/http_server.h"
#include "reconciler/k8s_job/job_daemon.h"
#include "reconciler/lease/election.h"
#include "reconciler/lease/fencing.h"
#include "reconciler/logging.h"
#include "reconciler/metrics.h"
#include "reconciler/notify/notifying_status_store.h"
#include "reconciler/observer.h"
#include "reconciler/rollout_reconciler.h"
#include "reconciler/source_poller.h"
#include "reconciler/status_store.h"
#include "reconciler/version.h"

namespace tr::reconciler {
namespace {

using Log = std::shared_ptr<spdlog::logger>;
using std::chrono::system_clock;

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

// /healthz, /readyz and /metrics on a server of their own (reconciler/http), so that load on
// the webhook port never delays a probe; stopped on destruction, on every path out of
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
    options.routes = {
        {"GET", "/healthz",
         [&, started](const http::Request&) -> http::Response {
           const bool live = metrics.Live(started, env.Now(), config.unhealthy_after);
           if (live) return {200, "text/plain", "ok\n"};
           return {503, "text/plain", "stuck: no successful poll or reconcile lately\n"};
         }},
        {"GET", "/readyz",
         [&metrics](const http::Request&) -> http::Response {
           if (metrics.ready) return {200, "text/plain", "ready\n"};
           return {503, "text/plain", "waiting for the first poll\n"};
         }},
        {"GET", "/metrics",
         [&metrics, extra_metrics](const http::Request&) -> http::Response {
           return {200, "text/plain; version=0.0.4",
                   metrics.RenderPrometheus() + (extra_metrics ? extra_metrics() : "")};
         }},
    };
    auto server = http::HttpServer::Start(std::move(options));
    if (!server.ok()) {
      log->error("step=listen address={} error={}", LogValue(config.listen),
                 LogValue(Msg(server.status())));
      return false;
    }
    server_ = *std::move(server);
    return true;
  }

 private:
  std::unique_ptr<http::HttpServer> server_;
};

// Blocks SIGTERM and SIGINT in every thread and turns the first into a stop request. From
// then on the process has `grace` to wind down; past it (or at a second signal) it exits at
// once. That is safe: every step is recorded before its call, as for a kill -9.
std::jthread StopOnSignals(std::stop_source& stop, std::chrono::seconds grace) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return std::jthread([set, &stop, grace](std::stop_token own) {
    std::optional<Env::TimePoint> deadline;
    while (!own.stop_requested()) {
      timespec tick{0, 200'000'000};
      const bool signalled = sigtimedwait(&set, nullptr, &tick) > 0;
      if (signalled && !deadline) {
        ModuleLogger("daemon")->info("step=stopping grace={}s", grace.count());
        stop.request_stop();
        deadline = Env::Default().Now() + grace;
      } else if (deadline && (signalled || Env::Default().Now() >= *deadline)) {
        ModuleLogger("daemon")->error("step=stop error=\"did not stop within {}s; exiting\"",
                                      grace.count());
        spdlog::shutdown();
        std::_Exit(2);
      }
    }
  });
}

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

// Settings of the whole process for a long-running daemon.
void TuneProcess() {
  // The listeners hold up to 1,024 connections each besides Git, gRPC and HTTP clients: the
  // soft descriptor limit (1,024 on many hosts) goes up to the hard one.
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
}

}  // namespace

int RunDaemon(const DaemonConfig& config) {
  TuneProcess();
  ConfigureLogging(config.log_level, config.log_format);
  Log log = ModuleLogger("daemon");
  std::stop_source stop;
  std::jthread signals = StopOnSignals(stop, config.shutdown_timeout);
  if (absl::Status s = gitsource::ConfigureLibgit2(Libgit2SettingsOf(config)); !s.ok()) {
    return FailStart(log, s);
  }
  auto source = gitsource::LibGitSource::Open(config.git);
  if (!source.ok()) return FailStart(log, source.status());
  for (const std::string& removed : (*source)->mirror_repairs()) {
    log->warn("step=repair-mirror removed={}", LogValue(removed));
  }
  Env& env = Env::Default();
  gitsource::StatusWriterConfig writer_config;
  writer_config.branch = config.status_branch;
  writer_config.author_name = config.status_author_name;
  writer_config.author_email = config.status_author_email;
  writer_config.coalesce_window = config.status_commit_window;
  auto writer = gitsource::GitStatusWriter::Create(**source, writer_config, env);
  if (!writer.ok()) return FailStart(log, writer.status());
  Metrics metrics;
  GitStatusStore git_store(**writer, &metrics);
  auto notifier = StartNotifier(config, metrics);  // --notify; spooled, never blocking
  if (!notifier.ok()) return FailStart(log, notifier.status());
  notify::NotifyingStatusStore notifying(git_store, **notifier);
  auto election = lease::Election::Open(config.leader_election, config.kubeconfig, env);
  if (!election.ok()) return FailStart(log, election.status());
  std::function<bool()> reports_rollouts;  // with several replicas, the holder of shard 0 only
  if (*election) {
    reports_rollouts = [&] { return (*election)->elector().Holding(0, env.Now()).has_value(); };
  }
  auto forge_reporting = ForgeReporting::Start(config, **source, notifying, git_store,
                                                      std::move(reports_rollouts), env);
  if (!forge_reporting.ok()) return FailStart(log, forge_reporting.status());  // --forge
  StatusStore& store = *forge_reporting ? (*forge_reporting)->store() : notifying;
  HttpEndpoints endpoints;
  std::function<std::string()> election_metrics;
  if (*election) election_metrics = [&] { return (*election)->RenderPrometheus(env); };
  if (!endpoints.Start(config, metrics, env, log, election_metrics)) return 1;
  forge::PollTrigger poll_now;  // --webhook-listen: a verified push polls at once
  forge::TriggeredEnv poll_env(env, poll_now);
  forge::WebhookQueue webhook_queue(static_cast<size_t>(config.webhooks.queue));
  auto webhooks = StartWebhookListener(config, webhook_queue, metrics);
  if (!webhooks.ok()) return FailStart(log, webhooks.status());
  std::jthread webhook_dispatcher([&](std::stop_token own) {
    DispatchWebhooks(webhook_queue, poll_now,
                            *forge_reporting ? &(*forge_reporting)->flow() : nullptr, own);
  });
  const BackoffPolicy load_backoff{std::chrono::seconds(1), std::chrono::seconds(30),
                                   /*max_attempts=*/0};  // unused: until stopped
  auto statuses = LoadStatusesAtStart(store, load_backoff, env, stop.get_token());
  if (!statuses.ok()) {
    if (absl::IsCancelled(statuses.status())) return 0;
    return FailStart(log, statuses.status());
  }
  log->info(
      "step=start version={} repo-branch={} status-branch={} clusters-with-status={} dry-run={}",
      ReconcilerVersion(), config.git.branch, config.status_branch, statuses->size(),
      config.dry_run);

  talos::GrpcTalosClientOptions talos_options;
  talos_options.shutdown = stop.get_token();
  TalosconfigClientFactory clients({config.credentials_dir, config.talosconfig}, talos_options);
  TalosFleetObserver observer(clients, config.node_name);
  TalosRolloutExecutor executor(clients,
                                {config.state_dir / "etcd-snapshots",
                                 {config.drain_timeout, std::chrono::seconds(2)},
                                 config.etcd_snapshots_keep},
                                env);
  // With leader election every node operation first proves the shard is still held.
  std::optional<lease::FencedExecutor> fenced_executor;
  std::optional<lease::FencedStatusStore> fenced_store;
  if (*election) {
    fenced_executor.emplace(executor, (*election)->elector());
    fenced_store.emplace(store, (*election)->elector());
  }
  BackgroundSteps background(fenced_executor ? static_cast<RolloutExecutor&>(*fenced_executor)
                                             : executor);  // pulls, installs, drains
  StatusStore& acting_store = fenced_store ? static_cast<StatusStore&>(*fenced_store) : store;
  DesiredState desired;
  gates::ProbeGateRunner gate_runner(clients);
  // Promotion reads the upstream clusters from the branch itself (the plain store: no
  // notifications), so a cluster another replica reconciles counts too.
  std::optional<registry::InstallerReleases> releases;  // --installer-registry
  if (const auto& registry = config.installer_registry) {
    releases.emplace(
        [registry](std::stop_token s) { return registry::ListRegistryTags(*registry, s); },
        registry->ttl, env);
  }
  RolloutReconciler reconciler({desired, observer, background, acting_store, env, metrics,
                                &gate_runner, &git_store, releases ? &*releases : nullptr},
                               {config.node_poll_interval, config.dry_run, 32}, *statuses);
  k8s_upgrade::InProcessRunnerOptions upgrade_options;
  upgrade_options.poll_interval =
      std::min(config.node_poll_interval, std::chrono::milliseconds(1000));
  if (*election) {  // a deposed replica's running upgrade stops before its next change
    upgrade_options.may_change = [&elector = (*election)->elector()](const std::string& c) {
      return lease::CheckHeld(elector, c);
    };
  }
  k8s_upgrade::InProcessUpgradeRunner kubernetes_upgrades(clients, upgrade_options);
  if (config.kubernetes_upgrade_mode == "inprocess") {
    reconciler.SetKubernetesUpgrades(&kubernetes_upgrades);
  }
  std::unique_ptr<k8s_upgrade::KubernetesUpgradeRunner> job_upgrades;  // Jobs (job mode)
  if (config.kubernetes_upgrade_mode == "job") {
    auto opened = k8s_job::OpenJobUpgrades(config.upgrade_jobs, config.kubeconfig,
                                            config.node_poll_interval, env,
                                            upgrade_options.may_change);
    if (!opened.ok()) return FailStart(log, opened.status());
    job_upgrades = *std::move(opened);
    reconciler.SetKubernetesUpgrades(job_upgrades.get());
  }
  std::optional<lease::ShardedReconciler> sharded;
  if (*election) {
    (*election)->elector().PinnedShards([&desired](const std::string& cluster) {
      std::optional<int> pin;
      if (std::shared_ptr<const DesiredSnapshot> now = desired.Current()) {
        for (const core::ClusterProfile& p : now->profiles.profiles) {
          if (p.name == cluster) pin = p.shard;
        }
      }
      return pin;
    });
    sharded.emplace(reconciler, (*election)->elector(), git_store,
                    [&](const std::string& cluster, std::optional<core::ClusterStatus> recorded) {
                      reconciler.Adopt(cluster, std::move(recorded));
                    });
  }
  ProgressMarkingReconciler marking(
      sharded ? static_cast<ClusterReconciler&>(*sharded) : reconciler, metrics, env);
  ControllerOptions controller_options;
  controller_options.workers = config.workers;
  controller_options.resync = config.resync;
  Controller controller(controller_options, marking, env);
  SourcePoller poller(
      {config.poll_interval, config.poll_jitter, config.shards() > 1 ? config.shards() : 0},
      {**source, desired, [&](const std::string& c) { controller.Enqueue(c); }, metrics, poll_env});
  if (*election) {
    // A shard just taken: its clusters are reconciled at once.
    (*election)->Start([&](int shard) {
      std::shared_ptr<const DesiredSnapshot> now = desired.Current();
      if (!now) return;
      for (const core::ClusterProfile& p : now->profiles.profiles) {
        if (core::ShardOf(p.name, p.shard, config.shards()) == shard) controller.Enqueue(p.name);
      }
    });
  }
  {
    std::jthread polling([&] { poller.Run(stop.get_token()); });
    std::jthread listing_releases([&] {
      if (releases) releases->Run(stop.get_token());  // never holds up a reconcile
    });
    controller.Run(stop.get_token());
  }
  if (*election) (*election)->Stop();  // nothing acts any more: give the Leases back
  log->info("step=stop");
  return 0;
}

}  // namespace tr::reconciler
