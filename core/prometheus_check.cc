#include "core/prometheus_check.h"

#include "core/yaml_decode.h"
#include "fmt/format.h"

namespace tr::core {

bool PrometheusCheck::DecodeKeys(const MappingReader& m) {
  const Field query_field = m.Required("query");
  std::optional<std::string> text = ReadString(query_field);
  if (text && text->empty()) query_field.Error("must not be empty");
  if (!text || text->empty()) return false;
  query = *text;
  if (const Field f = m.Optional("max"); f.present()) {
    max_value = ReadNumber(f);
    return max_value.has_value();
  }
  return true;
}

std::string PrometheusCheck::Describe() const {
  return fmt::format("Prometheus {} query \"{}\" is {}", endpoint.url, query,
                     max_value ? fmt::format("<= {}", *max_value) : "a single number");
}

}  // namespace tr::core
