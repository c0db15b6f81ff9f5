// The reconciler's version, set by the build from the CMake project version.
#pragma once

#include <string_view>

namespace tr::reconciler {

std::string_view ReconcilerVersion();

}  // namespace tr::reconciler
