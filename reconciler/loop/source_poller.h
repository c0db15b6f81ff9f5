// The source loop of the daemon: polls the profile repository, publishes the profiles of every
// new commit as the desired state and enqueues the clusters they name; and, once at start, reads
// every cluster's last recorded status.
//
// Time, sleep and randomness come from the injected Env, so tests run the loop in simulated
// time. Every successful poll marks progress on the metrics (see
// Metrics::MarkProgress; /healthz turns unhealthy when progress stops).
//
// Thread-safety: one thread runs a SourcePoller; `PollOnce` and `Run` are not to be called
// concurrently. LoadStatusesAtStart is a free function for the start-up thread.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <stop_token>
#include <string>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "core/status.h"
#include "gitsource/git_source.h"
#include "reconciler/loop/desired_state.h"
#include "reconciler/loop/poll_trigger.h"
#include "reconciler/loop/status_store.h"
#include "reconciler/runtime/metrics.h"

namespace tr::reconciler {

struct SourcePollerOptions {
  std::chrono::milliseconds interval{std::chrono::seconds(60)};
  double jitter = 0.1;  // each wait is interval * (1 ± jitter), so replicas spread out
  int shards = 0;       // --shards: a profile's spec.shard must be below it (0: not checked)
};

struct SourcePollerDeps {
  gitsource::GitSource& source;
  DesiredState& desired;
  std::function<void(const std::string& cluster)> enqueue;
  Metrics& metrics;
  Env& env;  // time, jitter, and the sleeps between polls
  // With it, the wait between polls is its WaitFor, which a Trigger() (a push webhook) ends
  // early; without, a sleep on `env`.
  PollTrigger* trigger;
};

class SourcePoller {
 public:
  SourcePoller(SourcePollerOptions options, SourcePollerDeps deps);

  // One poll. When the branch moved, reads its profiles, publishes them and enqueues every
  // cluster they name (valid or not). Returns the poll's error (and counts it); a snapshot that
  // cannot be read is logged and retried at the next poll.
  absl::Status PollOnce(std::stop_token stop);

  // PollOnce, then waits a jittered interval, until `stop`.
  void Run(std::stop_token stop);

  // The wait before the next poll: interval * (1 ± jitter).
  std::chrono::milliseconds NextWait();

 private:
  absl::Status Publish(const std::string& commit);

  const SourcePollerOptions options_;
  SourcePollerDeps deps_;
  std::string published_;  // the commit whose profiles were published last
};

// Every cluster's last recorded status, read at start. Transient errors (Unavailable,
// DeadlineExceeded, Aborted, Internal, ...) are retried with jittered backoff until `stop`
// (then Cancelled). Errors that only a person can fix are returned at once so the daemon
// fails at start: InvalidArgument, Unauthenticated, PermissionDenied, FailedPrecondition and
// DataLoss (a corrupt object). A status file that cannot be read back is no such error: the
// store skips it (StatusStore::LoadAll).
absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadStatusesAtStart(
    StatusStore& store, const BackoffPolicy& backoff, Env& env, std::stop_token stop);

// Whether an error reaching the repository needs a person (bad configuration or credentials)
// rather than time: ClassifyError's class at ErrorSource::kLoad (operations/error_class.h).
bool IsPermanentSourceError(const absl::Status& status);

}  // namespace tr::reconciler
