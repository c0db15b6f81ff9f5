// The one release cache: the last list a ReleaseSource (release_source.h) gave, refreshed every
// time to live. Refresh() replaces the list on success and keeps it (logging the error) on
// failure; Run() refreshes every `ttl` until stopped, and says when a list changed (the
// daemon then reconciles every cluster, so a release learned or marked broken shows without
// waiting for the resync). Readers never wait for the source.
//
// Thread-safety: Known() and Broken() from any thread; Refresh() and Run() from one thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <vector>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "base/mutex.h"
#include "core/version.h"
#include "reconciler/clients/releases/release_source.h"

namespace tr::reconciler::releases {

class ReleaseCache {
 public:
  ReleaseCache(std::unique_ptr<ReleaseSource> source, std::chrono::milliseconds ttl, Env& env);

  // Asks the source once; its list replaces the known one when it answers. True when the
  // known or the broken releases are not what they were.
  absl::StatusOr<bool> Refresh(std::stop_token stop);
  // Refresh (calling `changed`, when set, after a refresh that changed a list), then wait
  // `ttl` (on the Env), until `stop`. After a failed refresh it waits kFirstRetry, doubling
  // with each failure in a row, never longer than `ttl`.
  static constexpr std::chrono::milliseconds kFirstRetry{std::chrono::seconds(10)};
  void Run(std::stop_token stop, const std::function<void()>& changed = {});
  // The releases of the last successful refresh; empty before the first.
  std::vector<core::Version> Known() const;
  // The releases marked broken at the last successful refresh; empty before the first.
  std::vector<core::Version> Broken() const;

 private:
  const std::unique_ptr<ReleaseSource> source_;
  const std::chrono::milliseconds ttl_;
  Env& env_;
  mutable Mutex mu_;
  std::vector<core::Version> known_ ABSL_GUARDED_BY(mu_);
  std::vector<core::Version> broken_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler::releases
