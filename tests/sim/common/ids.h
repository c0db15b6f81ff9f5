// Identifiers the simulated nodes hand out: UUIDs (boot ids, actor ids) and xids (event ids,
// 20 characters of base32hex, sortable by time like Talos' github.com/rs/xid ids).
// Thread-safe.
#pragma once

#include <chrono>
#include <string>

namespace tr::sim {

// A random version-4 UUID, lower case: "3f2b...-....".
std::string NewUuid();

// A 20-character xid whose first four bytes are `time`'s Unix seconds, so ids sort by time and,
// within a process, by creation order.
std::string NewXid(std::chrono::system_clock::time_point time);

}  // namespace tr::sim
