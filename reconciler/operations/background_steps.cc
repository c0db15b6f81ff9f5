#include "reconciler/operations/background_steps.h"

#include <optional>

#include "base/thread_name.h"
#include "fmt/format.h"

namespace tr::reconciler {

struct BackgroundSteps::Step {
  std::string key;
  OutstandingStep what;
  Mutex mu;
  std::optional<absl::StatusOr<ActionResult>> result ABSL_GUARDED_BY(mu);  // set once done
  std::jthread thread;

  bool Done() {
    MutexLock lock(mu);
    return result.has_value();
  }
  bool Failed() {
    MutexLock lock(mu);
    return result.has_value() && !result->ok();
  }
};

namespace {

std::string StepKey(const core::ClusterProfile& profile, const core::RolloutDecision& d) {
  return fmt::format("{}|{}|{}|{}", profile.name, core::ActionKindName(d.kind), d.node, d.image);
}

ActionResult InProgress(std::string detail = "") {
  ActionResult r;
  r.detail = std::move(detail);
  r.in_progress = true;
  return r;
}

}  // namespace

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

std::string BackgroundSteps::Progress(const std::string& cluster) {
  return inner_.Progress(cluster);
}

std::optional<OutstandingStep> BackgroundSteps::Outstanding(const std::string& cluster) {
  MutexLock lock(mu_);
  auto it = running_.find(cluster);
  if (it == running_.end()) return std::nullopt;
  OutstandingStep what = it->second->what;
  what.done = it->second->Done();
  what.failed = it->second->Failed();
  return what;
}

std::optional<absl::StatusOr<ActionResult>> BackgroundSteps::TakeFinished(
    const std::string& cluster) {
  MutexLock lock(mu_);
  return TakeIfDoneLocked(cluster);
}

std::optional<absl::StatusOr<ActionResult>> BackgroundSteps::TakeIfDoneLocked(
    const std::string& cluster) {
  auto it = running_.find(cluster);
  if (it == running_.end()) return std::nullopt;
  std::shared_ptr<Step> step = it->second;
  std::optional<absl::StatusOr<ActionResult>> result;
  {
    MutexLock step_lock(step->mu);
    if (!step->result) return std::nullopt;
    result = *std::move(step->result);  // the step stays Done()
  }
  retired_.push_back(std::move(step));  // joined later; its thread is ending
  running_.erase(it);
  return result;
}

bool BackgroundSteps::OtherStepRunningLocked(const std::string& cluster, const std::string& key) {
  auto it = running_.find(cluster);
  if (it == running_.end() || it->second->key == key) return false;
  if (!it->second->Done()) return true;
  RetireLocked(std::move(it->second));  // finished, and no longer asked for: dropped
  running_.erase(it);
  return false;
}

absl::StatusOr<ActionResult> BackgroundSteps::Execute(const core::ClusterProfile& profile,
                                                      const core::RolloutDecision& decision,
                                                      std::stop_token stop) {
  const std::string key = StepKey(profile, decision);
  if (!core::TraitsOf(decision.kind).runs_in_background) {
    {
      MutexLock lock(mu_);
      if (OtherStepRunningLocked(profile.name, key)) return InProgress();
    }
    return inner_.Execute(profile, decision, stop);  // no lock across an inline action
  }
  MutexLock lock(mu_);
  if (OtherStepRunningLocked(profile.name, key)) return InProgress();
  auto it = running_.find(profile.name);
  if (it != running_.end()) {  // this very step
    if (auto result = TakeIfDoneLocked(profile.name)) return *std::move(result);
    return InProgress(inner_.Progress(profile.name));
  }
  auto step = std::make_shared<Step>();
  step->key = key;
  step->what = {decision.kind, decision.node, decision.image, false};
  Step* raw = step.get();
  step->thread = std::jthread([this, raw, profile, decision](std::stop_token step_stop) {
    NameThisThread("background-step");
    absl::StatusOr<ActionResult> result = inner_.Execute(profile, decision, step_stop);
    {
      MutexLock step_lock(raw->mu);
      raw->result = std::move(result);
    }
    if (on_done_ && !step_stop.stop_requested()) on_done_(profile.name);
  });
  running_.emplace(profile.name, std::move(step));
  return InProgress();
}

}  // namespace tr::reconciler
