#include "core/status_types.h"

namespace tr::core {

const char* ComponentStateName(ComponentState state) {
  switch (state) {
    case ComponentState::kIdle:
      return "idle";
    case ComponentState::kInProgress:
      return "in-progress";
    case ComponentState::kCompleted:
      return "completed";
    case ComponentState::kFailed:
      return "failed";
    case ComponentState::kBlocked:
      return "blocked";
  }
  return "unknown";
}

}  // namespace tr::core
