#include "reconciler/features/notify/spool.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "reconciler/runtime/json_fields.h"
#include "reconciler/runtime/private_files.h"

namespace tr::reconciler::notify {

namespace fs = std::filesystem;

std::string NewDeliveryId(std::mt19937_64& rng) {
  const uint64_t a = rng(), b = rng();
  // A version 4 UUID: 4 in the version nibble, 10xx in the variant bits.
  return fmt::format("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff,
                     a & 0xfff, 0x8000 | (b >> 48 & 0x3fff), b & 0xffffffffffff);
}

bool SaveSpooled(const Spooled& s) {
  nlohmann::json doc{
      {"delivery", s.delivery}, {"event", s.event}, {"attempts", s.attempts}, {"body", s.body}};
  if (!s.rollout.empty()) {
    doc["rollout"] = s.rollout;
    doc["reply"] = s.reply;
  }
  const fs::path tmp = s.file.string() + ".tmp";
  if (!CreatePrivateFile(tmp).ok()) return false;
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (!out.flush()) return false;
  }
  std::error_code ec;
  fs::rename(tmp, s.file, ec);
  return !ec;
}

std::optional<Spooled> LoadSpooled(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("body") || !doc["body"].is_string()) return std::nullopt;
  Spooled s;
  s.file = file;
  s.delivery = json_fields::Text(doc, "delivery");
  s.event = json_fields::Text(doc, "event");
  s.rollout = json_fields::Text(doc, "rollout");
  s.reply = doc.contains("reply") && doc["reply"].is_boolean() && doc["reply"].get<bool>();
  s.attempts = static_cast<int>(std::clamp<int64_t>(json_fields::Integer(doc, "attempts", 0), 0,
                                                    std::numeric_limits<int>::max()));
  s.body = doc["body"].get<std::string>();
  return s;
}

}  // namespace tr::reconciler::notify
