// Decoding a whole repository of profiles at once: `reconciler.yaml` first, then every
// `clusters/*.yaml` with those defaults merged under it. A broken profile never stops the
// others; a broken `reconciler.yaml` makes every profile invalid, since acting on them
// without their defaults (maintenance windows, pause) would be unsafe.
//
// Pure; thread-compatible.
#pragma once

#include <vector>

#include "core/profile_set_types.h"

namespace tr::core {

// Decodes every file. Files other than `reconciler.yaml`, `clusters/*.yaml` and the
// `schematics/*.yaml` that profiles reference are ignored; an unreferenced schematic file is
// not read at all.
ProfileSet DecodeProfileSet(const std::vector<SourceFile>& files,
                            const ValidationOptions& options = {});

}  // namespace tr::core
