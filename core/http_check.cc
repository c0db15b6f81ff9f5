#include "core/http_check.h"

#include "core/yaml_decode.h"
#include "fmt/format.h"

namespace tr::core {

bool HttpCheck::DecodeKeys(const MappingReader& m) {
  const Field f = m.Optional("expectStatus");
  if (!f.present()) return true;
  std::optional<int64_t> status = ReadInteger(f, 100, 599);
  if (status) expect_status = static_cast<int>(*status);
  return status.has_value();
}

std::string HttpCheck::Describe() const {
  return fmt::format("GET {} answers {}", endpoint.url, expect_status);
}

}  // namespace tr::core
