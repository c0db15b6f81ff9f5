#include "reconciler/background_steps.h"

#include <optional>

#include "fmt/format.h"

namespace tr::reconciler {

struct BackgroundSteps::Step {
  std::string key;
  Mutex mu;
  std::optional<absl::StatusOr<ActionResult>> result ABSL_GUARDED_BY(mu);  // set once done
  std::jthread thread;

  bool Done() {
    MutexLock lock(mu);
    return result.has_value();
  }
};

namespace {

std::string StepKey(const core::ClusterProfile& profile, const core::RolloutDecision& d) {
  return fmt::format("{}|{}|{}|{}", profile.name, core::ActionKindName(d.kind), d.node, d.image);
}

ActionResult InProgress() {
  ActionResult r;
  r.in_progress = true;
  return r;
}

}  // namespace

bool BackgroundSteps::RunsInBackground(core::ActionKind kind) {
  using core::ActionKind;
  return kind == ActionKind::kPrePullImage || kind == ActionKind::kInstallImage ||
         kind == ActionKind::kDrainNode || kind == ActionKind::kSnapshotEtcd;
}

BackgroundSteps::~BackgroundSteps() {
  MutexLock lock(mu_);
  for (auto& [cluster, step] : running_) step->thread.request_stop();
  for (auto& step : retired_) step->thread.request_stop();
  // The jthreads join as the steps are destroyed.
  running_.clear();
  retired_.clear();
}

void BackgroundSteps::RetireLocked(std::shared_ptr<Step> step) {
  std::erase_if(retired_, [](const std::shared_ptr<Step>& s) { return s->Done(); });
  step->thread.request_stop();
  retired_.push_back(std::move(step));
}

absl::StatusOr<ActionResult> BackgroundSteps::Execute(const core::ClusterProfile& profile,
                                                      const core::RolloutDecision& decision,
                                                      std::stop_token stop) {
  if (!RunsInBackground(decision.kind)) return inner_.Execute(profile, decision, stop);
  const std::string key = StepKey(profile, decision);
  MutexLock lock(mu_);
  auto it = running_.find(profile.name);
  if (it != running_.end() && it->second->key == key) {
    std::shared_ptr<Step> step = it->second;
    MutexLock step_lock(step->mu);
    if (!step->result) return InProgress();
    absl::StatusOr<ActionResult> result = *std::move(step->result);
    retired_.push_back(step);  // joined later; its thread is ending
    running_.erase(it);
    return result;
  }
  if (it != running_.end()) {
    RetireLocked(std::move(it->second));
    running_.erase(it);
  }
  auto step = std::make_shared<Step>();
  step->key = key;
  Step* raw = step.get();
  step->thread = std::jthread([this, raw, profile, decision](std::stop_token step_stop) {
    absl::StatusOr<ActionResult> result = inner_.Execute(profile, decision, step_stop);
    MutexLock step_lock(raw->mu);
    raw->result = std::move(result);
  });
  running_.emplace(profile.name, std::move(step));
  return InProgress();
}

}  // namespace tr::reconciler
