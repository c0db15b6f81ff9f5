#include "reconciler/loop/source_poller.h"

#include "core/profile_set.h"
#include "reconciler/operations/error_class.h"
#include "reconciler/runtime/logging.h"
#include "reconciler/runtime/timezones.h"

namespace tr::reconciler {
namespace {

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

}  // namespace

SourcePoller::SourcePoller(SourcePollerOptions options, SourcePollerDeps deps)
    : options_(options), deps_(std::move(deps)) {}

absl::Status SourcePoller::Publish(const std::string& commit) {
  absl::StatusOr<gitsource::ProfileSnapshot> snapshot = deps_.source.Snapshot(commit);
  if (!snapshot.ok()) return snapshot.status();
  core::ValidationOptions validation;
  validation.is_known_timezone = IsKnownTimezone;
  validation.shards = options_.shards;
  auto next = std::make_shared<DesiredSnapshot>(
      DesiredSnapshot{commit, core::DecodeProfileSet(snapshot->files, validation)});
  ModuleLogger("git")->info("step=snapshot commit={} profiles={} invalid={}", commit.substr(0, 12),
                            next->profiles.profiles.size(), next->profiles.invalid.size());
  deps_.desired.Publish(next);
  for (const auto& profile : next->profiles.profiles) deps_.enqueue(profile.name);
  for (const auto& invalid : next->profiles.invalid) deps_.enqueue(invalid.cluster);
  return absl::OkStatus();
}

absl::Status SourcePoller::PollOnce(std::stop_token stop) {
  const Env::TimePoint started = deps_.env.Now();
  absl::StatusOr<gitsource::RemoteHead> head = deps_.source.Poll(stop);
  const char* result = head.ok() ? "ok" : "failed";
  deps_.metrics.git_polls.Inc(result);
  deps_.metrics.git_poll_duration.Observe(result, deps_.env.Now() - started);
  if (!head.ok()) {
    ModuleLogger("git")->warn("step=poll error={}", LogValue(Msg(head.status())));
    return head.status();
  }
  deps_.metrics.MarkProgress(deps_.env.Now());
  if (head->commit == published_) return absl::OkStatus();
  if (absl::Status s = Publish(head->commit); !s.ok()) {
    ModuleLogger("git")->error("step=snapshot commit={} error={}", LogValue(head->commit),
                               LogValue(Msg(s)));
    return absl::OkStatus();  // the poll worked; the snapshot is tried again next time
  }
  published_ = head->commit;
  deps_.metrics.ready = deps_.desired.Current() != nullptr;
  return absl::OkStatus();
}

std::chrono::milliseconds SourcePoller::NextWait() {
  return Spread(options_.interval, options_.jitter, deps_.env);
}

void SourcePoller::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    (void)PollOnce(stop);  // logged and counted; the next poll retries
    if (deps_.trigger == nullptr) {
      if (!deps_.env.SleepFor(NextWait(), stop)) break;
    } else if (deps_.trigger->WaitFor(NextWait(), stop) == PollTrigger::Wake::kStopped) {
      break;
    }
  }
}

bool IsPermanentSourceError(const absl::Status& status) {
  return ClassifyError(status, ErrorSource::kLoad) == ErrorClass::kStall;
}

absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadStatusesAtStart(
    StatusStore& store, const BackoffPolicy& backoff, Env& env, std::stop_token stop) {
  for (int retry = 1;; ++retry) {
    if (stop.stop_requested()) return absl::CancelledError("stopped while loading the status");
    absl::StatusOr<std::map<std::string, core::ClusterStatus>> statuses = store.LoadAll(stop);
    if (statuses.ok() || IsPermanentSourceError(statuses.status())) return statuses;
    const std::chrono::milliseconds wait = JitteredBackoff(backoff, retry, env);
    ModuleLogger("daemon")->error("step=load-status error={} retry-in={}ms",
                                  LogValue(Msg(statuses.status())), wait.count());
    if (!env.SleepFor(wait, stop)) {
      return absl::CancelledError("stopped while loading the status");
    }
  }
}

}  // namespace tr::reconciler
