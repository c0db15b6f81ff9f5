// The fencing token of a status record (docs/running.md, "Fencing"): which replica wrote it,
// under which generation of the cluster's ownership. A replica that takes a cluster's shard
// takes the generation after the one its status file holds, and claims the file with it; a
// record is then written only over a file whose generation is not newer (nor the same one,
// taken by another replica), so a replica that lost the shard can no longer land a record
// over its successor's, however long it was frozen.
//
// Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tr::core {

struct Fence {
  uint64_t generation = 0;  // 1 for the first holder; above kMaxFenceGeneration is invalid
  std::string holder;       // the replica's identity (its pod name)

  bool operator==(const Fence&) const = default;
};

// Generations stay below 2^53, so a JSON reader of the status file reads them exactly; a file
// claiming one beyond is not a status (a hostile one could otherwise fence a cluster for ever).
inline constexpr uint64_t kMaxFenceGeneration = (uint64_t{1} << 53) - 1;

// The generation a replica takes over a file fenced with `recorded` (nullopt: none).
uint64_t NextFenceGeneration(const std::optional<Fence>& recorded);

// Why a record fenced with `ours` may not replace a file fenced with `on_branch`, or "" when it
// may: a newer generation, or the same one held by another replica. An unfenced record (written
// without leader election) or file never refuses, nor a file at kMaxFenceGeneration.
std::string FenceRefusal(const std::optional<Fence>& on_branch, const std::optional<Fence>& ours);

}  // namespace tr::core
