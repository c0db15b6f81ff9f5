// Reading fields of JSON that came over the network (the Kubernetes API, Prometheus, a Lease)
// without trusting its shape. nlohmann's json::value() throws when the object is not one or the
// field has another type, and a const operator[] reads out of bounds for a missing key; these
// answer "not there" instead (an empty string, the fallback, an empty list), so an answer of the
// wrong shape is reported by whoever reads it, never an exception that ends the daemon.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "nlohmann/json.hpp"

namespace tr::reconciler::json_fields {

// `object[key]`; null when `object` is not an object or has no `key`.
const nlohmann::json& Field(const nlohmann::json& object, const char* key);
// The string at `key`; "" when missing or not a string.
std::string Text(const nlohmann::json& object, const char* key);
// The integer at `key`; `fallback` when missing or not an integer.
int64_t Integer(const nlohmann::json& object, const char* key, int64_t fallback);
// The boolean at `key`; false when missing or not a boolean.
bool Flag(const nlohmann::json& object, const char* key);
// The array at `key`; an empty array when missing or not an array.
const nlohmann::json& List(const nlohmann::json& object, const char* key);

}  // namespace tr::reconciler::json_fields
