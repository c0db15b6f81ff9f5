// The Talos releases Image Factories mark broken, read once for a command that plans without
// the daemon (`plan`): each factory's release list and broken list are read together, with
// the daemon's rule (FactoryReleaseSource: a release a factory still lists is not
// broken), and the broken ones are marked in the release catalog the planner reads.
//
// Thread-safety: reentrant.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "base/env.h"
#include "core/support_matrix.h"
#include "reconciler/clients/factory/image_factory.h"

namespace tr::reconciler::factory {

// Marks in `catalog` every release one of `origins` marks broken, each asked with `options`
// (its origin replaced). The errors of the factories that could not be asked, one line each
// naming the factory; their releases are then not marked. `env`: the release lists' clock.
std::vector<std::string> MarkBrokenReleases(const ImageFactoryOptions& options,
                                            const std::set<std::string>& origins,
                                            core::ReleaseCatalog& catalog, Env& env);

}  // namespace tr::reconciler::factory
