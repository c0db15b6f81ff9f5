#include "reconciler/clients/releases/release_cache.h"

#include "reconciler/runtime/logging.h"

namespace tr::reconciler::releases {

ReleaseCache::ReleaseCache(std::unique_ptr<ReleaseSource> source, std::chrono::milliseconds ttl,
                           Env& env)
    : source_(std::move(source)), ttl_(ttl), env_(env) {}

absl::Status ReleaseCache::Refresh(std::stop_token stop) {
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
  known_ = std::move(list->releases);
  broken_ = std::move(list->broken);
  return absl::OkStatus();
}

void ReleaseCache::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    (void)Refresh(stop);  // logged; the last known list stays
    if (!env_.SleepFor(ttl_, stop)) break;
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
