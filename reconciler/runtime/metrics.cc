#include "reconciler/runtime/metrics.h"

#include <algorithm>

#include "core/rollout.h"
#include "fmt/format.h"
#include "reconciler/runtime/version.h"

namespace tr::reconciler {
namespace {

// A label value in the text format: backslash, double quote and line feed escaped.
std::string Escape(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

void Header(std::string& out, std::string_view name, std::string_view help, const char* type) {
  out += fmt::format("# HELP talos_reconciler_{0} {1}\n# TYPE talos_reconciler_{0} {2}\n", name,
                     help, type);
}

// `{label="value"}`, with `extra` (already formatted, e.g. `le="5"`) appended; "" when empty.
std::string Labels(std::string_view label, std::string_view value, std::string_view extra = "") {
  std::string inside = label.empty() ? "" : fmt::format("{}=\"{}\"", label, Escape(value));
  if (!extra.empty()) inside += (inside.empty() ? "" : ",") + std::string(extra);
  return inside.empty() ? "" : "{" + inside + "}";
}

std::string Number(double v) { return fmt::format("{}", v); }

}  // namespace

CounterFamily::CounterFamily(std::string_view name, std::string_view help, std::string_view label,
                             std::initializer_list<std::string_view> known_values)
    : name_(name), help_(help), label_(label) {
  MutexLock lock(mu_);
  for (std::string_view v : known_values) counts_.emplace(v, 0);
  if (label_.empty()) counts_.emplace("", 0);
}

void CounterFamily::Inc(std::string_view value, uint64_t by) {
  MutexLock lock(mu_);
  auto it = counts_.find(value);
  if (it == counts_.end()) it = counts_.emplace(value, 0).first;
  it->second += by;
}

uint64_t CounterFamily::Value(std::string_view value) const {
  MutexLock lock(mu_);
  auto it = counts_.find(value);
  return it == counts_.end() ? 0 : it->second;
}

void CounterFamily::Render(std::string& out) const {
  Header(out, name_, help_, "counter");
  MutexLock lock(mu_);
  for (const auto& [value, count] : counts_) {
    out += fmt::format("talos_reconciler_{}{} {}\n", name_, Labels(label_, value), count);
  }
}

HistogramFamily::HistogramFamily(std::string_view name, std::string_view help,
                                 std::string_view label, std::vector<double> bounds_seconds)
    : name_(name), help_(help), label_(label), bounds_(std::move(bounds_seconds)) {}

void HistogramFamily::Observe(std::string_view value, std::chrono::duration<double> duration) {
  const double seconds = std::max(0.0, duration.count());
  MutexLock lock(mu_);
  auto it = series_.find(value);
  if (it == series_.end()) {
    it = series_.emplace(value, Series{std::vector<uint64_t>(bounds_.size(), 0), 0, 0}).first;
  }
  Series& s = it->second;
  const auto bound = std::lower_bound(bounds_.begin(), bounds_.end(), seconds);
  if (bound != bounds_.end()) ++s.buckets[static_cast<size_t>(bound - bounds_.begin())];
  ++s.count;
  s.sum += seconds;
}

uint64_t HistogramFamily::Count(std::string_view value) const {
  MutexLock lock(mu_);
  auto it = series_.find(value);
  return it == series_.end() ? 0 : it->second.count;
}

uint64_t HistogramFamily::CountAtMost(std::string_view value, double bound_seconds) const {
  MutexLock lock(mu_);
  auto it = series_.find(value);
  if (it == series_.end()) return 0;
  uint64_t n = 0;
  for (size_t i = 0; i < bounds_.size() && bounds_[i] <= bound_seconds; ++i) {
    n += it->second.buckets[i];
  }
  return n;
}

double HistogramFamily::Sum(std::string_view value) const {
  MutexLock lock(mu_);
  auto it = series_.find(value);
  return it == series_.end() ? 0 : it->second.sum;
}

void HistogramFamily::Render(std::string& out) const {
  Header(out, name_, help_, "histogram");
  MutexLock lock(mu_);
  for (const auto& [value, s] : series_) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i < bounds_.size(); ++i) {
      cumulative += s.buckets[i];
      out += fmt::format("talos_reconciler_{}_bucket{} {}\n", name_,
                         Labels(label_, value, "le=\"" + Number(bounds_[i]) + "\""), cumulative);
    }
    out += fmt::format("talos_reconciler_{}_bucket{} {}\n", name_,
                       Labels(label_, value, "le=\"+Inf\""), s.count);
    out +=
        fmt::format("talos_reconciler_{}_sum{} {}\n", name_, Labels(label_, value), Number(s.sum));
    out += fmt::format("talos_reconciler_{}_count{} {}\n", name_, Labels(label_, value), s.count);
  }
}

GaugeFamily::GaugeFamily(std::string_view name, std::string_view help, std::string_view label)
    : name_(name), help_(help), label_(label) {}

void GaugeFamily::Set(std::string_view value, double gauge) {
  MutexLock lock(mu_);
  values_.insert_or_assign(std::string(value), gauge);
}

void GaugeFamily::Erase(std::string_view value) {
  MutexLock lock(mu_);
  if (auto it = values_.find(value); it != values_.end()) values_.erase(it);
}

double GaugeFamily::Value(std::string_view value) const {
  MutexLock lock(mu_);
  auto it = values_.find(value);
  return it == values_.end() ? 0 : it->second;
}

bool GaugeFamily::Has(std::string_view value) const {
  MutexLock lock(mu_);
  return values_.find(value) != values_.end();
}

void GaugeFamily::Render(std::string& out) const {
  Header(out, name_, help_, "gauge");
  MutexLock lock(mu_);
  for (const auto& [value, gauge] : values_) {
    out += fmt::format("talos_reconciler_{}{} {}\n", name_, Labels(label_, value), Number(gauge));
  }
}

ClusterPhaseGauge::ClusterPhaseGauge(std::vector<std::string> phases)
    : phases_(std::move(phases)) {}

void ClusterPhaseGauge::Set(const std::string& cluster, std::string_view phase) {
  MutexLock lock(mu_);
  phase_[cluster] = std::string(phase);
}

void ClusterPhaseGauge::Forget(const std::string& cluster) {
  MutexLock lock(mu_);
  phase_.erase(cluster);
}

std::string ClusterPhaseGauge::PhaseOf(const std::string& cluster) const {
  MutexLock lock(mu_);
  auto it = phase_.find(cluster);
  return it == phase_.end() ? "" : it->second;
}

void ClusterPhaseGauge::Render(std::string& out) const {
  Header(out, "cluster_phase", "The phase of each cluster: 1 for its current phase, else 0.",
         "gauge");
  MutexLock lock(mu_);
  for (const auto& [cluster, current] : phase_) {
    for (const std::string& phase : phases_) {
      out += fmt::format("talos_reconciler_cluster_phase{} {}\n",
                         Labels("cluster", cluster, "phase=\"" + Escape(phase) + "\""),
                         phase == current ? 1 : 0);
    }
  }
}

std::vector<double> NodeUpgradeBuckets() {
  return {30, 60, 120, 180, 300, 450, 600, 900, 1200, 1800, 2700, 3600};
}

std::vector<double> GitBuckets() { return {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}; }

namespace {

std::vector<std::string> AllPhases() {
  using core::ClusterPhase;
  std::vector<std::string> names;
  for (ClusterPhase p :
       {ClusterPhase::kReady, ClusterPhase::kUpgradingTalos, ClusterPhase::kUpgradingKubernetes,
        ClusterPhase::kUpgradeFailed, ClusterPhase::kBlocked, ClusterPhase::kPaused,
        ClusterPhase::kWaitingForWindow, ClusterPhase::kWaitingForGate,
        ClusterPhase::kWaitingForPromotion}) {
    names.emplace_back(core::ClusterPhaseName(p));
  }
  return names;
}

}  // namespace

Metrics::Metrics()
    : reconciles("reconciles_total", "Cluster reconciles by how they ended.", "outcome",
                 {"done", "requeue", "transient_error", "stalled", "forget"}),
      node_upgrades_started("node_upgrades_started_total", "Node upgrades started.", "", {}),
      node_upgrades("node_upgrades_total", "Node upgrades by result.", "result",
                    {"completed", "failed", "rolled_back", "activated_early"}),
      node_upgrade_duration("node_upgrade_duration_seconds",
                            "Time from recording a node's upgrade to its result.", "result",
                            NodeUpgradeBuckets()),
      git_polls("git_polls_total", "Polls of the profile repository by result.", "result",
                {"ok", "failed"}),
      git_poll_duration("git_poll_duration_seconds",
                        "Duration of polls of the profile repository, fetch included.", "result",
                        GitBuckets()),
      status_commits("status_commits_total",
                     "Status records pushed, or queued for the next commit (news).", "", {}),
      status_record_failures("status_record_failures_total",
                             "Status records that could not be written or pushed.", "", {}),
      webhook_requests("webhook_requests_total", "Inbound webhook requests by outcome.", "outcome",
                       {"accepted", "ignored", "duplicate", "bad_signature", "too_large",
                        "malformed", "queue_full", "headers_too_large", "connections",
                        "peer_connections", "busy", "peer_busy", "timeout"}),
      endpoint_refused("endpoint_refused_total",
                       "Connections and requests the health and metrics listener refused, by "
                       "reason.",
                       "reason",
                       {"connections", "peer_connections", "headers_too_large", "too_large",
                        "busy", "peer_busy", "timeout", "malformed"}),
      notifications("notifications_total", "Outbound notification attempts by result.", "result",
                    {"sent", "retried", "dropped", "waited", "superseded", "filtered"}),
      status_files_skipped("status_files_skipped_total",
                           "Files on the status branch skipped when read, by reason.", "reason",
                           {"undecodable", "name_mismatch", "no_cluster", "duplicate", "too_large",
                            "too_many", "over_budget"}),
      cluster_phase(AllPhases()),
      client_certificate_expiry("client_certificate_expiry_timestamp_seconds",
                                "When the client certificate of each cluster's talosconfig "
                                "expires, in seconds since the epoch.",
                                "cluster"),
      nodes_pending_reboot("nodes_pending_reboot",
                           "Nodes installed ahead (policy.install: ahead) that wait for their "
                           "reboot in a maintenance window, by cluster.",
                           "cluster"),
      proposals("proposals", "Release proposals by the state of their pull request.", "state") {
  for (std::string_view state : {"open", "merged", "closed"}) proposals.Set(state, 0);
}

void Metrics::MarkProgress(std::chrono::system_clock::time_point now) {
  const int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  int64_t seen = last_progress_ms_.load();
  while (seen < ms && !last_progress_ms_.compare_exchange_weak(seen, ms)) {
  }
}

bool Metrics::Live(std::chrono::system_clock::time_point started,
                   std::chrono::system_clock::time_point now,
                   std::chrono::milliseconds stuck_after) const {
  const auto last = std::max(started, std::chrono::system_clock::time_point(
                                          std::chrono::milliseconds(last_progress_ms_.load())));
  return now - last <= stuck_after;
}

std::string Metrics::RenderPrometheus() const {
  std::string out;
  reconciles.Render(out);
  node_upgrades_started.Render(out);
  node_upgrades.Render(out);
  node_upgrade_duration.Render(out);
  git_polls.Render(out);
  git_poll_duration.Render(out);
  status_commits.Render(out);
  status_record_failures.Render(out);
  webhook_requests.Render(out);
  endpoint_refused.Render(out);
  notifications.Render(out);
  status_files_skipped.Render(out);
  cluster_phase.Render(out);
  client_certificate_expiry.Render(out);
  nodes_pending_reboot.Render(out);
  proposals.Render(out);
  Header(out, "ready", "Whether the first poll succeeded.", "gauge");
  out += fmt::format("talos_reconciler_ready {}\n", ready ? 1 : 0);
  Header(out, "build_info", "The version, commit and compiler of the running binary; always 1.",
         "gauge");
  out += fmt::format(
      "talos_reconciler_build_info{{version=\"{}\",commit=\"{}\",compiler=\"{}\"}} 1\n",
      Escape(ReconcilerVersion()), Escape(GetBuildStamp().commit), Escape(CompilerVersion()));
  return out;
}

}  // namespace tr::reconciler
