#include "core/fence.h"

#include "fmt/format.h"

namespace tr::core {

uint64_t NextFenceGeneration(const std::optional<Fence>& recorded) {
  if (!recorded) return 1;
  return recorded->generation >= kMaxFenceGeneration ? kMaxFenceGeneration
                                                     : recorded->generation + 1;
}

std::string FenceRefusal(const std::optional<Fence>& on_branch, const std::optional<Fence>& ours) {
  // A file at the ceiling was written by hand (no replica gets there): it cannot be ordered
  // against, and refusing every record over it would stop the cluster for good.
  if (!on_branch || !ours || on_branch->generation >= kMaxFenceGeneration) return "";
  if (on_branch->generation > ours->generation ||
      (on_branch->generation == ours->generation && on_branch->holder != ours->holder)) {
    return fmt::format(
        "the status branch holds generation {} of {} and this replica writes generation {} of {}: "
        "another replica took the cluster over",
        on_branch->generation, on_branch->holder, ours->generation, ours->holder);
  }
  return "";
}

}  // namespace tr::core
