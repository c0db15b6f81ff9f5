#include "core/start_checks.h"

#include "core/duration.h"
#include "core/timestamp.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

std::string FormatWindow(const MaintenanceWindow& w) {
  std::string days;
  for (int d : w.days) days += (days.empty() ? "" : ",") + std::string(WeekdayName(d));
  return fmt::format("{} {:02}:{:02} for {} ({})", days, w.start.count() / 60, w.start.count() % 60,
                     FormatDuration(w.duration), w.timezone);
}

std::string DescribeHealthCheck(const HealthCheck& c) {
  const std::string what = DescribeCheck(c.spec);
  return fmt::format(
      "health check {}: {} (within {}), before the first node of a step, before each further "
      "node (after settle) and before a Kubernetes step",
      c.name, what, FormatDuration(c.timeout));
}

// "; last: unhealthy \"HTTP 503\" at 2026-11-23T10:00:00Z", or "" when never checked.
std::string LastAnswer(const std::string& name, const GateState* last) {
  if (last == nullptr) return "";
  for (const GateResult& r : last->results) {
    if (r.name != name) continue;
    return fmt::format("; last: {} \"{}\" at {}", r.healthy ? "healthy" : "unhealthy", r.message,
                       FormatTimestamp(r.checked));
  }
  return "; last: not checked yet";
}

std::string GateTimeoutLine(const Policy& policy) {
  // A gate says the cluster is unhealthy, not which node made it so: nothing to roll back.
  return fmt::format(
      "a failing health check holds the start (WaitingForGate); after gateTimeout {} the "
      "rollout halts{}",
      FormatDuration(policy.gate_timeout),
      policy.on_failure == FailureAction::kRollback
          ? " without rolling any node back (onFailure: rollback applies to a failed node only)"
          : "");
}

std::string DescribePromotion(const Promotion& p) {
  std::string names;
  for (const Promotion::After& a : p.after) names += (names.empty() ? "" : ", ") + a.cluster;
  return fmt::format("promotion: starts only after {} ran the new versions, Ready, for {}", names,
                     FormatDuration(p.soak));
}

}  // namespace

std::vector<StartCheck> StartChecks(const ClusterProfile& profile) {
  const Policy& policy = profile.policy;
  std::vector<StartCheck> checks;
  for (StartCheck check : kAllStartChecks) {
    if (check == StartCheck::kPaused && !policy.paused) continue;
    if (check == StartCheck::kPromotion && !profile.promotion) continue;
    if (check == StartCheck::kWindow && policy.windows.empty()) continue;
    if (check == StartCheck::kHealthChecks && policy.health_checks.empty()) continue;
    checks.push_back(check);
  }
  return checks;
}

bool ChecksClusterHealth(StartCheck check) {
  return check == StartCheck::kNodesReady || check == StartCheck::kEtcdQuorum ||
         check == StartCheck::kHealthChecks;
}

std::vector<std::string> DescribeStartCheck(StartCheck check, const ClusterProfile& profile,
                                            const StartCheckAnswers* answers) {
  const GateState* last = answers ? answers->gates : nullptr;
  const Policy& policy = profile.policy;
  std::vector<std::string> lines;
  switch (check) {
    case StartCheck::kPaused:
      lines.push_back("paused: nothing starts until policy.paused is false");
      break;
    case StartCheck::kPromotion:
      if (!profile.promotion) break;
      lines.push_back(DescribePromotion(*profile.promotion));
      if (answers && answers->promotion) {
        lines.back() +=
            answers->promotion->ready ? "; now: ready" : "; now: " + answers->promotion->message;
      }
      break;
    case StartCheck::kWindow:
      for (const MaintenanceWindow& w : policy.windows) {
        lines.push_back("maintenance window: " + FormatWindow(w) +
                        "; nodes and Kubernetes steps start only inside it");
      }
      break;
    case StartCheck::kNodesReady:
      lines.push_back("pre-flight: every node reachable and Ready");
      break;
    case StartCheck::kEtcdQuorum:
      lines.push_back(
          "pre-flight: etcd has every member started and healthy, and at least 3 members (or a "
          "single control plane)");
      break;
    case StartCheck::kHealthChecks:
      for (const HealthCheck& c : policy.health_checks) {
        lines.push_back(DescribeHealthCheck(c) + LastAnswer(c.name, last));
      }
      lines.push_back(GateTimeoutLine(policy));
      if (last && last->failing_since) {
        lines.back() += "; failing since " + FormatTimestamp(*last->failing_since);
      }
      break;
  }
  return lines;
}

}  // namespace tr::core
