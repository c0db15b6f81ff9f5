#include "core/pending_mark.h"

#include <algorithm>
#include <vector>

#include "core/names.h"
#include "core/text.h"

namespace tr::core {
namespace {

constexpr std::string_view kSchematicField = "schematic=";
constexpr std::string_view kBootField = "boot=";
constexpr size_t kMaxBootIdLength = 64;

bool IsBootId(std::string_view id) {
  return !id.empty() && id.size() <= kMaxBootIdLength &&
         std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
         });
}

// Sets `into` from a field's value; false when the field came before or the value is unfit.
bool TakeField(std::string_view value, bool (*fits)(std::string_view), std::string& into,
               bool& seen) {
  if (seen || !fits(value)) return false;
  seen = true;
  into = std::string(value);
  return true;
}

bool IsMarkSchematic(std::string_view id) { return CheckSchematicId(id).ok(); }

}  // namespace

std::string EncodePendingMark(const PendingInstallMark& mark) {
  std::string text = mark.target.Tag();
  if (!mark.schematic.empty()) text += " " + std::string(kSchematicField) + mark.schematic;
  if (!mark.boot_id.empty()) text += " " + std::string(kBootField) + mark.boot_id;
  return text;
}

std::optional<PendingInstallMark> ParsePendingMark(std::string_view text) {
  const std::vector<std::string_view> fields = Split(text, ' ');
  absl::StatusOr<Version> target = ParseTalosVersion(fields.front());
  if (!target.ok()) return std::nullopt;
  PendingInstallMark mark{*target, "", ""};
  bool schematic_seen = false, boot_seen = false;
  for (size_t i = 1; i < fields.size(); ++i) {
    const std::string_view field = fields[i];
    bool taken = false;
    if (field.starts_with(kSchematicField)) {
      taken = TakeField(field.substr(kSchematicField.size()), IsMarkSchematic, mark.schematic,
                        schematic_seen);
    } else if (field.starts_with(kBootField)) {
      taken = TakeField(field.substr(kBootField.size()), IsBootId, mark.boot_id, boot_seen);
    }
    if (!taken) return std::nullopt;
  }
  return mark;
}

}  // namespace tr::core
