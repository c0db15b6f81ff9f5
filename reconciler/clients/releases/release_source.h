// A release source: something that yields the Talos releases a cluster could take, beside the
// catalog built in and reconciler.yaml's `releases` (the installer repository's tags, an Image
// Factory's versions). The daemon keeps one source's answer in a ReleaseCache
// (release_cache.h) and hands it to core as part of the ReleaseCatalog, so that planning stays
// pure. Sources are chosen by the flag that turns each on (reconciler/app/daemon/
// release_sources.h): a new source is one file implementing this interface and one line there.
//
// Thread-compatible: the cache calls List from one thread.
#pragma once

#include <cstddef>
#include <stop_token>
#include <vector>

#include "absl/status/statusor.h"
#include "core/version.h"

namespace tr::reconciler::releases {

struct ReleaseList {
  std::vector<core::Version> releases;  // exact vX.Y.Z only, sorted, oldest first
  std::vector<core::Version> broken;    // those marked broken (none of `releases`), sorted
  size_t listed = 0;                    // entries the source read, releases or not (for the log)
};

class ReleaseSource {
 public:
  virtual ~ReleaseSource() = default;
  // The releases the source has now. An error when it cannot tell (the cache keeps the last
  // list it had); Cancelled when `stop` ended it.
  virtual absl::StatusOr<ReleaseList> List(std::stop_token stop) = 0;
};

}  // namespace tr::reconciler::releases
