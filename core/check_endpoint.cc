#include "core/check_endpoint.h"

#include <optional>
#include <string_view>

#include "core/yaml_decode.h"

namespace tr::core {
namespace {

std::optional<std::string> DecodeUrl(const Field& field) {
  std::optional<std::string> url = ReadString(field);
  if (!url) return std::nullopt;
  std::string_view rest = *url;
  bool ok = rest.size() <= 2048;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else {
    ok = false;
  }
  ok = ok && !rest.empty() && rest.front() != '/';
  for (char c : rest) ok = ok && static_cast<unsigned char>(c) > 0x20 && c != 0x7F;
  if (!ok) field.Error("must be an http:// or https:// URL with a host and no spaces");
  return ok ? url : std::nullopt;
}

// An absolute path, read by the daemon when it checks (a mounted Secret or ConfigMap).
std::optional<std::string> DecodeCaFile(const Field& field) {
  std::optional<std::string> path = ReadString(field);
  if (!path) return std::nullopt;
  bool ok = path->starts_with("/") && path->size() <= 4096;
  for (char c : *path) ok = ok && static_cast<unsigned char>(c) >= 0x20 && c != 0x7F;
  if (!ok) field.Error("must be an absolute file path");
  return ok ? path : std::nullopt;
}

}  // namespace

bool CheckEndpoint::Decode(const MappingReader& m) {
  std::optional<std::string> read_url = DecodeUrl(m.Required("url"));
  bool ok = read_url.has_value();
  if (read_url) url = *std::move(read_url);
  if (const Field f = m.Optional("caFile"); f.present()) {
    std::optional<std::string> read_ca = DecodeCaFile(f);
    ok = ok && read_ca.has_value();
    if (read_ca) ca_file = *std::move(read_ca);
  }
  return ok;
}

}  // namespace tr::core
