#include "reconciler/daemon.h"

#include <csignal>
#include <random>
#include <thread>

#include "core/profile_set.h"
#include "gitsource/git_source.h"
#include "gitsource/status_writer.h"
#include "httplib.h"
#include "reconciler/cluster_clients.h"
#include "reconciler/controller.h"
#include "reconciler/desired_state.h"
#include "reconciler/executor.h"
#include "reconciler/gates/health_gate_runner.h"
#include "reconciler/logging.h"
#include "reconciler/metrics.h"
#include "reconciler/observer.h"
#include "reconciler/rollout_reconciler.h"
#include "reconciler/status_store.h"
#include "reconciler/timezones.h"

namespace tr::reconciler {
namespace {

using Log = std::shared_ptr<spdlog::logger>;

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

// Reads the profiles at `head` and publishes them; enqueues every cluster they name.
void PublishSnapshot(gitsource::GitSource& source, const std::string& head, DesiredState& desired,
                     Controller& controller, const Log& log) {
  absl::StatusOr<gitsource::ProfileSnapshot> snapshot = source.Snapshot(head);
  if (!snapshot.ok()) {
    log->error("step=snapshot commit={} error=\"{}\"", head, Msg(snapshot.status()));
    return;
  }
  core::ValidationOptions options;
  options.is_known_timezone = IsKnownTimezone;
  auto next = std::make_shared<DesiredSnapshot>(
      DesiredSnapshot{head, core::DecodeProfileSet(snapshot->files, options)});
  log->info("step=snapshot commit={} profiles={} invalid={}", head.substr(0, 12),
            next->profiles.profiles.size(), next->profiles.invalid.size());
  desired.Publish(next);
  for (const auto& profile : next->profiles.profiles) controller.Enqueue(profile.name);
  for (const auto& invalid : next->profiles.invalid) controller.Enqueue(invalid.cluster);
}

// Polls the repository until `stop`; a moved branch is read and its clusters enqueued.
void PollLoop(const DaemonConfig& config, gitsource::GitSource& source, DesiredState& desired,
              Controller& controller, Metrics& metrics, std::stop_token stop) {
  Log log = ModuleLogger("git");
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(1 - config.poll_jitter, 1 + config.poll_jitter);
  gitsource::ThreadSleeper sleeper;
  std::string last_head;
  while (!stop.stop_requested()) {
    ++metrics.polls;
    absl::StatusOr<gitsource::RemoteHead> head = source.Poll(stop);
    if (!head.ok()) {
      ++metrics.poll_errors;
      log->warn("step=poll error=\"{}\"", Msg(head.status()));
    } else if (head->commit != last_head) {
      PublishSnapshot(source, head->commit, desired, controller, log);
      last_head = head->commit;
      metrics.ready = desired.Current() != nullptr;
    }
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(config.poll_interval * jitter(rng));
    if (!sleeper.SleepFor(wait, stop)) break;
  }
}

std::unique_ptr<httplib::Server> StartHttp(const DaemonConfig& config, Metrics& metrics,
                                           std::jthread& thread, const Log& log) {
  auto server = std::make_unique<httplib::Server>();
  server->Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  server->Get("/readyz", [&metrics](const httplib::Request&, httplib::Response& res) {
    res.status = metrics.ready ? 200 : 503;
    res.set_content(metrics.ready ? "ready\n" : "waiting for the first poll\n", "text/plain");
  });
  server->Get("/metrics", [&metrics](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.RenderPrometheus(), "text/plain; version=0.0.4");
  });
  const size_t colon = config.listen.rfind(':');
  const std::string host = config.listen.substr(0, colon);
  const int port = std::atoi(config.listen.substr(colon + 1).c_str());
  if (!server->bind_to_port(host.c_str(), port)) {
    log->error("step=listen address={} error=\"cannot bind\"", config.listen);
    return nullptr;
  }
  thread = std::jthread([s = server.get()] { s->listen_after_bind(); });
  log->info("step=listen address={}", config.listen);
  return server;
}

// Blocks SIGTERM and SIGINT in every thread and turns them into a stop request.
std::jthread StopOnSignals(std::stop_source& stop) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return std::jthread([set, &stop](std::stop_token own) {
    while (!own.stop_requested()) {
      timespec tick{0, 200'000'000};
      if (sigtimedwait(&set, nullptr, &tick) > 0) {
        stop.request_stop();
        return;
      }
    }
  });
}

// Reads every cluster's last status, retrying until it works or the process is stopped.
std::optional<std::map<std::string, core::ClusterStatus>> LoadStatuses(StatusStore& store,
                                                                       std::stop_token stop,
                                                                       const Log& log) {
  gitsource::ThreadSleeper sleeper;
  while (!stop.stop_requested()) {
    auto statuses = store.LoadAll(stop);
    if (statuses.ok()) return *std::move(statuses);
    log->error("step=load-status error=\"{}\" retry=5s", Msg(statuses.status()));
    sleeper.SleepFor(std::chrono::seconds(5), stop);
  }
  return std::nullopt;
}

}  // namespace

int RunDaemon(const DaemonConfig& config) {
  ConfigureLogging(config.log_level);
  Log log = ModuleLogger("daemon");
  std::stop_source stop;
  std::jthread signals = StopOnSignals(stop);
  if (absl::Status s = gitsource::ConfigureLibgit2(); !s.ok()) {
    log->critical("step=start error=\"{}\"", Msg(s));
    return 1;
  }
  auto source = gitsource::LibGitSource::Open(config.git);
  if (!source.ok()) {
    log->critical("step=start error=\"{}\"", Msg(source.status()));
    return 1;
  }
  gitsource::SystemWallClock clock;
  gitsource::ThreadSleeper sleeper;
  gitsource::SeededRandomSource random;
  auto writer = gitsource::GitStatusWriter::Create(
      **source, {config.status_branch, config.status_author_name, config.status_author_email, {}},
      clock, sleeper, random);
  if (!writer.ok()) {
    log->critical("step=start error=\"{}\"", Msg(writer.status()));
    return 1;
  }
  GitStatusStore store(**writer);
  Metrics metrics;
  std::jthread http_thread;
  std::unique_ptr<httplib::Server> http = StartHttp(config, metrics, http_thread, log);
  if (!http) return 1;
  auto statuses = LoadStatuses(store, stop.get_token(), log);
  if (!statuses) return 0;
  log->info("step=start repo-branch={} status-branch={} clusters-with-status={} dry-run={}",
            config.git.branch, config.status_branch, statuses->size(), config.dry_run);

  TalosconfigClientFactory clients(config.credentials_dir, {});
  TalosFleetObserver observer(clients, config.node_name);
  TalosRolloutExecutor executor(
      clients,
      {config.state_dir / "etcd-snapshots", {config.drain_timeout, std::chrono::seconds(2)}}, clock,
      sleeper);
  DesiredState desired;
  gates::ProbeGateRunner gate_runner(clients);
  RolloutReconciler reconciler({desired, observer, executor, store, clock, metrics, &gate_runner},
                               {config.node_poll_interval, config.dry_run, 32}, *statuses);
  ControllerOptions controller_options;
  controller_options.workers = config.workers;
  controller_options.resync = config.resync;
  Controller controller(controller_options, reconciler, clock);
  {
    std::jthread poller([&](std::stop_token) {
      PollLoop(config, **source, desired, controller, metrics, stop.get_token());
    });
    controller.Run(stop.get_token());
  }
  http->stop();
  log->info("step=stop");
  return 0;
}

}  // namespace tr::reconciler
