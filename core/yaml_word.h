// Writing a word as a YAML key or value without yaml-cpp's check of the scalar against its
// plain-scalar grammar, which it runs on every string it writes without a style and which was
// most of the time a status took to render.
//
// A word is an ASCII letter followed by ASCII letters and digits. yaml-cpp writes one plain, as
// it is, unless it is one of its null words ("null", "Null", "NULL"); so does this. Anything
// else goes through yaml-cpp's own check, so the text is the same either way.
//
// Pure; thread-compatible.
#pragma once

#include <string_view>

#include "yaml-cpp/emitter.h"

namespace tr::core {

struct YamlWord {
  std::string_view text;
};

// Whether yaml-cpp writes `text` plain, as it is, by the rule above.
bool IsPlainYamlWord(std::string_view text);

// Without a style manipulator before it (the next scalar's style is not readable back).
YAML::Emitter& operator<<(YAML::Emitter& out, YamlWord word);

}  // namespace tr::core
