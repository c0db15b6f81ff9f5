#include "reconciler/loop/controller.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "base/thread_name.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler {

Controller::Controller(ControllerOptions options, ClusterReconciler& reconciler,
                       Env& env)
    : options_(options), reconciler_(reconciler), env_(env) {}

void Controller::Enqueue(const std::string& cluster) { queue_.AddAt(cluster, env_.Now()); }

void Controller::EnqueueChange(const std::string& cluster) {
  queue_.AddChange(cluster, env_.Now(), env_.Monotonic());
}

std::chrono::milliseconds Controller::Backoff(int failures) const {
  return JitteredBackoff({options_.backoff_initial, options_.backoff_max, 0}, failures, env_);
}

std::optional<Env::Instant> Controller::Process(const std::string& cluster, std::stop_token stop) {
  const ReconcileOutcome outcome = [&] {
    ReconcileLogScope scope(cluster, NewReconcileId(env_));  // this reconcile's log lines
    return reconciler_.Reconcile(cluster, stop);
  }();
  const TimePoint now = env_.Now();
  std::optional<TimePoint> next;
  {
    MutexLock lock(mu_);
    int& failures = failures_[cluster];
    failures = outcome.kind == ReconcileOutcome::Kind::kTransientError ? failures + 1 : 0;
    switch (outcome.kind) {
      case ReconcileOutcome::Kind::kDone:
      case ReconcileOutcome::Kind::kStalled:
        next = now + Spread(options_.resync, options_.resync_spread, env_);
        break;
      case ReconcileOutcome::Kind::kRequeueAfter:
        next = now + outcome.after;
        break;
      case ReconcileOutcome::Kind::kTransientError:
        next = now + Backoff(failures);
        break;
      case ReconcileOutcome::Kind::kForget:
        failures_.erase(cluster);
        break;
    }
  }
  if (next) queue_.AddAt(cluster, *next);
  return outcome.looked_at;
}

int Controller::RunDue(std::stop_token stop) {
  int ran = 0;
  while (!stop.stop_requested()) {
    std::optional<std::string> cluster = queue_.TryTake(env_.Now());
    if (!cluster) break;
    const std::optional<Env::Instant> looked_at = Process(*cluster, stop);
    queue_.Done(*cluster, looked_at);
    ++ran;
  }
  return ran;
}

void Controller::Run(std::stop_token stop) {
  std::vector<std::jthread> workers;
  for (int i = 0; i < std::max(1, options_.workers); ++i) {
    workers.emplace_back([this, stop] {
      NameThisThread("reconcile");
      std::optional<std::string> cluster = queue_.Take(env_, stop);
      while (cluster) {
        const std::optional<Env::Instant> looked_at = Process(*cluster, stop);
        cluster = queue_.DoneAndTake(*cluster, looked_at, env_, stop);
      }
    });
  }
}

}  // namespace tr::reconciler
