#include "core/health_check.h"

#include <algorithm>

namespace tr::core {
namespace health_check_internal {

std::optional<std::string> DecodeName(const Field& field) {
  std::optional<std::string> name = ReadString(field);
  if (!name) return std::nullopt;
  bool ok = !name->empty() && name->size() <= 63;
  for (char c : *name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-');
  }
  if (!ok) field.Error("must be 1-63 letters, digits, '.', '_' or '-'");
  return ok ? name : std::nullopt;
}

std::optional<size_t> DecodeType(const Field& field, const std::vector<std::string_view>& types) {
  std::optional<std::string> text = ReadString(field);
  if (!text) return std::nullopt;
  for (size_t i = 0; i < types.size(); ++i) {
    if (*text == types[i]) return i;
  }
  field.Error("must be " + ListChoices(types));
  return std::nullopt;
}

void RefuseForeignKeys(const MappingReader& m, size_t chosen,
                       const std::vector<std::string_view>& types,
                       const std::vector<std::vector<std::string_view>>& keys) {
  const auto takes = [&keys](size_t type, std::string_view key) {
    return std::find(keys[type].begin(), keys[type].end(), key) != keys[type].end();
  };
  std::vector<std::string_view> refused;
  for (size_t type = 0; type < keys.size(); ++type) {
    for (std::string_view key : keys[type]) {
      if (takes(chosen, key) ||
          std::find(refused.begin(), refused.end(), key) != refused.end()) {
        continue;
      }
      refused.push_back(key);
      const Field f = m.Optional(key);
      if (!f.present()) continue;
      std::vector<size_t> takers;
      for (size_t other = 0; other < keys.size(); ++other) {
        if (takes(other, key)) takers.push_back(other);
      }
      f.Error(takers.size() == 1 ? "only applies to type " + std::string(types[takers[0]])
                                 : "does not apply to type " + std::string(types[chosen]));
    }
  }
}

}  // namespace health_check_internal

std::optional<HealthCheck> DecodeHealthCheck(const Field& field) {
  return DecodeHealthCheckOf<HealthCheckSpec>(field);
}

}  // namespace tr::core
