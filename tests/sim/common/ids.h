// Identifiers the simulated nodes hand out: UUIDs (boot ids, actor ids) and xids (event ids,
// 20 characters of base32hex, sortable by time like Talos' github.com/rs/xid ids).
// Thread-safe.
#pragma once

#include <chrono>
#include <string>

namespace tr::sim {

// A random version-4 UUID, lower case: "3f2b...-....".
std::string NewUuid();

// A UUID-shaped id that is the same for the same `key` in every run (objects the fleet file
// defines, whose references must agree: a ReplicaSet and its pods' ownerReferences).
std::string StableUuid(const std::string& key);

// A 20-character xid whose first four bytes are `time`'s Unix seconds, so ids sort by time and,
// within a process, by creation order.
std::string NewXid(std::chrono::system_clock::time_point time);

}  // namespace tr::sim
