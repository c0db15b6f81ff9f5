// What the daemon exposes on /metrics, in the Prometheus text format (version 0.0.4), which
// `promtool check metrics` accepts (tests/reconciler/metrics_promtool_test.cc runs it).
//
// The families are the ones docs/metrics.md lists. Each is a value type here with one
// label at most (the cluster phase gauge has two), rendered in a fixed order with its HELP
// and TYPE lines. Label values a family knows up front (outcomes, results) are rendered at 0
// from the start, so a rate() over them exists before the first event.
//
// Durations are measured by the caller with its injected Env (base/env.h): nothing here
// reads a clock.
//
// Thread-safe: every member may be updated and rendered from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"

namespace tr::reconciler {

// A counter per value of one label; with an empty label, one unlabelled counter (value "").
class CounterFamily {
 public:
  CounterFamily(std::string_view name, std::string_view help, std::string_view label,
                std::initializer_list<std::string_view> known_values);
  void Inc(std::string_view value = "", uint64_t by = 1);
  uint64_t Value(std::string_view value = "") const;
  void Render(std::string& out) const;

 private:
  const std::string name_, help_, label_;
  mutable Mutex mu_;
  std::map<std::string, uint64_t, std::less<>> counts_ ABSL_GUARDED_BY(mu_);
};

// A histogram per value of one label (or one unlabelled), with fixed upper bounds in seconds.
class HistogramFamily {
 public:
  HistogramFamily(std::string_view name, std::string_view help, std::string_view label,
                  std::vector<double> bounds_seconds);
  void Observe(std::string_view value, std::chrono::duration<double> duration);
  // Observations of `value` so far (the _count series).
  uint64_t Count(std::string_view value = "") const;
  // Observations of `value` at or under `bound_seconds` (that bucket's series).
  uint64_t CountAtMost(std::string_view value, double bound_seconds) const;
  double Sum(std::string_view value = "") const;
  void Render(std::string& out) const;

 private:
  struct Series {
    std::vector<uint64_t> buckets;  // per bound, not cumulative; rendered cumulative
    uint64_t count = 0;
    double sum = 0;
  };
  const std::string name_, help_, label_;
  const std::vector<double> bounds_;
  mutable Mutex mu_;
  std::map<std::string, Series, std::less<>> series_ ABSL_GUARDED_BY(mu_);
};

// A gauge per value of one label (or one unlabelled); series can be removed.
class GaugeFamily {
 public:
  GaugeFamily(std::string_view name, std::string_view help, std::string_view label);
  void Set(std::string_view value, double gauge);
  void Erase(std::string_view value);
  // The series' value; 0 when it does not exist.
  double Value(std::string_view value = "") const;
  bool Has(std::string_view value) const;
  void Render(std::string& out) const;

 private:
  const std::string name_, help_, label_;
  mutable Mutex mu_;
  std::map<std::string, double, std::less<>> values_ ABSL_GUARDED_BY(mu_);
};

// talos_reconciler_cluster_phase{cluster, phase}: for every cluster known, one series per
// phase, 1 for the cluster's current phase and 0 for the others (as kube-state-metrics does
// for a pod's phase), so `== 1` selects and `sum by (phase)` counts.
class ClusterPhaseGauge {
 public:
  explicit ClusterPhaseGauge(std::vector<std::string> phases);
  void Set(const std::string& cluster, std::string_view phase);
  void Forget(const std::string& cluster);
  // The cluster's phase; "" when it is not known.
  std::string PhaseOf(const std::string& cluster) const;
  void Render(std::string& out) const;

 private:
  const std::vector<std::string> phases_;
  mutable Mutex mu_;
  std::map<std::string, std::string> phase_ ABSL_GUARDED_BY(mu_);
};

// Bucket bounds: node upgrades take minutes (a reboot, an image pull); Git polls and fetches
// take well under a second on a healthy remote and up to the operation's deadline otherwise.
std::vector<double> NodeUpgradeBuckets();
std::vector<double> GitBuckets();

struct Metrics {
  Metrics();

  // Reconciles by how they ended: done, requeue, transient_error, stalled, forget.
  CounterFamily reconciles;
  // Node upgrades started, and by result (completed, failed, rolled_back, activated_early: a node
  // installed ahead that booted it outside a window) with how long each
  // took from being recorded to that result.
  CounterFamily node_upgrades_started;
  CounterFamily node_upgrades;
  HistogramFamily node_upgrade_duration;
  // Polls of the profile repository (ls-remote and, when the branch moved, a fetch) by result
  // (ok, failed), and their durations.
  CounterFamily git_polls;
  HistogramFamily git_poll_duration;
  CounterFamily status_commits;
  // Status records that could not be written or pushed (the status branch is then behind).
  CounterFamily status_record_failures;
  // Inbound webhook requests by outcome (reconciler/features/webhooks/webhook_receiver.h):
  // accepted, ignored, duplicate, bad_signature, too_large, malformed, queue_full, and the
  // listener's refusals (reconciler/clients/http/http_server.h): headers_too_large, connections,
  // peer_connections, busy, peer_busy, timeout.
  CounterFamily webhook_requests;
  // What the --listen server (health, readiness, metrics) refused, by the same reasons.
  CounterFamily endpoint_refused;
  // Outbound notification attempts by result (reconciler/features/notify/webhook_notifier.h): sent,
  // retried (a failed attempt to be retried), dropped (given up, or pushed out of a full spool),
  // waited (put off without counting as an attempt), superseded (an edit left out for a later
  // one), filtered (left out by the target's filters).
  CounterFamily notifications;
  // Files on the status branch skipped at each read (reconciler/loop/status_store.h), by reason:
  // undecodable, name_mismatch, no_cluster, duplicate, too_large, over_budget; too_many once
  // per read of a status/ tree refused whole.
  CounterFamily status_files_skipped;
  ClusterPhaseGauge cluster_phase;
  // When each cluster's talosconfig client certificate expires, in seconds since the epoch.
  GaugeFamily client_certificate_expiry;
  // Nodes of each cluster installed ahead and pending their reboot (policy.install: ahead).
  GaugeFamily nodes_pending_reboot;
  // Release proposals by the state of their newest pull request: open, merged, closed
  // (reconciler/features/proposals/proposer.h).
  GaugeFamily proposals;
  std::atomic<bool> ready{false};  // the first poll succeeded
  // The leadership gauges (talos_reconciler_leader, talos_reconciler_shard_owned{shard}) are
  // rendered by reconciler/features/lease/election.h and appended to the scrape by the daemon.

  // Liveness: the last time the process made progress (a successful poll or a finished
  // reconcile). A process that makes none for a while is stuck and should be restarted.
  void MarkProgress(std::chrono::system_clock::time_point now);
  // True when progress was marked within `stuck_after` of `now`, or when `started` (the start
  // of the process) is that recent.
  bool Live(std::chrono::system_clock::time_point started,
            std::chrono::system_clock::time_point now, std::chrono::milliseconds stuck_after) const;

  // Every family, with its HELP and TYPE lines, and talos_reconciler_build_info (version,
  // commit, compiler: reconciler/runtime/version.h) at 1.
  std::string RenderPrometheus() const;

 private:
  std::atomic<int64_t> last_progress_ms_{0};  // since the epoch; 0 = never
};

}  // namespace tr::reconciler
