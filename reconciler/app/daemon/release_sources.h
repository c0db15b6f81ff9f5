// The release sources of the daemon (reconciler/clients/releases/release_source.h), each by the
// flag that turns it on: --installer-registry (the installer repository's tags), then
// --image-factory (the factory's versions and those it marks broken). The first whose flag is
// set serves, through the one release cache; none: the catalog alone. A new source is one file
// implementing ReleaseSource and one line in the table of release_sources.cc (or a
// RegisterReleaseSource call, as the tests' toy source does).
//
// Thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "base/env.h"
#include "reconciler/app/daemon/daemon_config.h"
#include "reconciler/clients/releases/release_cache.h"
#include "reconciler/clients/releases/release_source.h"

namespace tr::reconciler {

struct OpenedReleaseSource {
  std::unique_ptr<releases::ReleaseSource> source;
  std::chrono::milliseconds ttl{0};  // how long a list it gave is kept before asking again
};

struct ReleaseSourceEntry {
  std::string flag;  // "--installer-registry"
  // The source `config` sets up; nullptr (no source) when its flag is not set.
  std::function<OpenedReleaseSource(const DaemonConfig& config)> open;
};

// Adds `entry` after the built-in sources (and those registered before it).
void RegisterReleaseSource(ReleaseSourceEntry entry);

// The release cache of the first source whose flag `config` sets; nullptr when none is set.
std::unique_ptr<releases::ReleaseCache> OpenReleaseCache(const DaemonConfig& config, Env& env);

}  // namespace tr::reconciler
