#include "reconciler/runtime/json_fields.h"

namespace tr::reconciler::json_fields {

using nlohmann::json;

const json& Field(const json& object, const char* key) {
  static const json kMissing;
  if (!object.is_object()) return kMissing;
  const auto it = object.find(key);
  return it == object.end() ? kMissing : *it;
}

std::string Text(const json& object, const char* key) {
  const json& value = Field(object, key);
  return value.is_string() ? value.get<std::string>() : std::string();
}

int64_t Integer(const json& object, const char* key, int64_t fallback) {
  const json& value = Field(object, key);
  return value.is_number_integer() ? value.get<int64_t>() : fallback;
}

bool Flag(const json& object, const char* key) {
  const json& value = Field(object, key);
  return value.is_boolean() && value.get<bool>();
}

const json& List(const json& object, const char* key) {
  static const json kEmpty = json::array();
  const json& value = Field(object, key);
  return value.is_array() ? value : kEmpty;
}

}  // namespace tr::reconciler::json_fields
