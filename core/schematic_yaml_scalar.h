// How the canonical schematic YAML (schematic.h) writes one string: plain when YAML reads
// the plain text back as that same string, else double-quoted with escapes. Like the
// factory's serializer for the usual values (names, kernel arguments), always readable
// back as the same string.
//
// Pure; thread-compatible.
#pragma once

#include <string>
#include <string_view>

namespace tr::core {

std::string SchematicYamlScalar(std::string_view text);

// True when `text` written plain reads back as the string `text` (not a number, boolean
// or null, no indicator or character that would end or change it).
bool IsPlainSafeString(std::string_view text);

}  // namespace tr::core
