#include "core/health_gates.h"

#include <algorithm>

#include "core/duration.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

constexpr std::chrono::seconds kMaxGateBackoff{60};

std::chrono::seconds Seconds(std::chrono::system_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::seconds>(d);
}

}  // namespace

GateState UpdateGateState(const GateState& previous, std::vector<GateResult> results,
                          TimePoint now) {
  GateState next;
  for (GateResult& r : results) r.checked = now;
  const bool healthy = std::all_of(results.begin(), results.end(),
                                   [](const GateResult& r) { return r.healthy; });
  next.results = std::move(results);
  if (!healthy) next.failing_since = previous.failing_since.value_or(now);
  return next;
}

GateState AfterDecisionStartingNothing(GateState state, const RolloutDecision& decision) {
  if (decision.phase != ClusterPhase::kWaitingForGate &&
      decision.phase != ClusterPhase::kUpgradingTalos) {
    state.failing_since.reset();
  }
  return state;
}

ExtraGateResult GateVerdict(const GateState& state) {
  ExtraGateResult verdict;
  for (const GateResult& r : state.results) {
    if (r.healthy) continue;
    verdict.passed = false;
    verdict.message += fmt::format("{}{}: {}", verdict.message.empty() ? "" : "; ", r.name,
                                   r.message);
  }
  if (!verdict.passed) verdict.failing_since = state.failing_since;
  return verdict;
}

RolloutDecision WaitForGates(const RolloutInput& in, Progress progress) {
  const TimePoint since = in.extra_gates.failing_since.value_or(in.now);
  const std::chrono::seconds timeout = in.profile.policy.gate_timeout;
  const TimePoint deadline = since + timeout;
  RolloutDecision d;
  d.progress = progress;
  if (in.now >= deadline && in.memory.in_flight.empty()) {
    d.kind = ActionKind::kFailNode;
    d.phase = ClusterPhase::kUpgradeFailed;
    d.message = fmt::format("health check failing for longer than gateTimeout {}: {}",
                            FormatDuration(timeout), in.extra_gates.message);
    d.failure = RolloutFailure{"", in.profile.talos_version, d.message, in.now, "",
                               in.profile.retry_token};
    return d;
  }
  const std::chrono::seconds waited = Seconds(in.now - since);
  const std::chrono::seconds backoff =
      std::clamp(waited / 2, in.poll_interval, std::max(in.poll_interval, kMaxGateBackoff));
  d.kind = ActionKind::kNone;
  d.phase = ClusterPhase::kWaitingForGate;
  d.message = fmt::format("waiting for health check: {} (failing for {} of gateTimeout {})",
                          in.extra_gates.message, FormatDuration(waited), FormatDuration(timeout));
  d.wait_until = std::min(in.now + backoff, std::max(deadline, in.now));
  return d;
}

}  // namespace tr::core
