#include "reconciler/clients/factory/broken_releases.h"

#include <chrono>

#include "base/env.h"
#include "fmt/format.h"
#include "reconciler/clients/releases/release_cache.h"

namespace tr::reconciler::factory {

std::vector<std::string> MarkBrokenReleases(const ImageFactoryOptions& options,
                                            const std::set<std::string>& origins,
                                            core::ReleaseCatalog& catalog, Env& env) {
  std::vector<std::string> errors;
  for (const std::string& origin : origins) {
    ImageFactoryOptions asked = options;
    asked.origin = origin;
    // One refresh, never the periodic one: the TTL is unused.
    releases::ReleaseCache releases(std::make_unique<FactoryReleaseSource>(asked),
                                    std::chrono::hours(1), env);
    if (absl::StatusOr<bool> refreshed = releases.Refresh({}); !refreshed.ok()) {
      errors.push_back(fmt::format("cannot read the broken releases of the Image Factory {}: {}",
                                   origin, std::string(refreshed.status().message())));
      continue;
    }
    for (const core::Version& v : releases.Broken()) catalog.MarkTalosBroken(v);
  }
  return errors;
}

}  // namespace tr::reconciler::factory
