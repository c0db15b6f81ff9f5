#include "reconciler/clients/releases/release_cache.h"

#include <algorithm>

#include "reconciler/runtime/logging.h"

namespace tr::reconciler::releases {

ReleaseCache::ReleaseCache(std::unique_ptr<ReleaseSource> source, std::chrono::milliseconds ttl,
                           Env& env)
    : source_(std::move(source)), ttl_(ttl), env_(env) {}

absl::StatusOr<bool> ReleaseCache::Refresh(std::stop_token stop) {
  absl::StatusOr<ReleaseList> list = source_->List(stop);
  auto log = ModuleLogger("registry");
  if (!list.ok()) {
    log->warn("step=list-tags error={} outcome=keeping-last-known",
              LogValue(list.status().ToString()));
    return list.status();
  }
  log->info("step=list-tags tags={} releases={} newest={} broken={}", list->listed,
            list->releases.size(),
            list->releases.empty() ? "none" : list->releases.back().ToString(),
            list->broken.size());
  MutexLock lock(mu_);
  const bool changed = known_ != list->releases || broken_ != list->broken;
  known_ = std::move(list->releases);
  broken_ = std::move(list->broken);
  return changed;
}

void ReleaseCache::Run(std::stop_token stop, const std::function<void()>& changed) {
  std::chrono::milliseconds retry = std::min(kFirstRetry, ttl_);
  while (!stop.stop_requested()) {
    absl::StatusOr<bool> refreshed = Refresh(stop);  // a failure is logged; the list stays
    std::chrono::milliseconds wait = ttl_;
    if (refreshed.ok()) {
      retry = std::min(kFirstRetry, ttl_);
      if (*refreshed && changed) changed();
    } else {  // a source that failed (at start, say) is asked again well before the TTL
      wait = retry;
      retry = std::min(retry * 2, ttl_);
    }
    if (!env_.SleepFor(wait, stop)) break;
  }
}

std::vector<core::Version> ReleaseCache::Known() const {
  MutexLock lock(mu_);
  return known_;
}

std::vector<core::Version> ReleaseCache::Broken() const {
  MutexLock lock(mu_);
  return broken_;
}

}  // namespace tr::reconciler::releases
