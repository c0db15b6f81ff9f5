// A registry's WWW-Authenticate challenge (it decides where credentials go) and the tags it
// lists, read as releases.
#include "reconciler/registry/installer_tags.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tr::fuzz::Selected selected = tr::fuzz::Select(data, size, 2);
  if (selected.choice == 0) {
    (void)tr::reconciler::registry::ParseChallenge(selected.rest);
  } else {
    std::vector<std::string> tags;
    std::string_view rest = selected.rest;
    while (!rest.empty()) {
      const size_t newline = rest.find('\n');
      tags.emplace_back(rest.substr(0, newline));
      rest = newline == std::string_view::npos ? "" : rest.substr(newline + 1);
    }
    (void)tr::reconciler::registry::ReleaseTags(tags);
  }
  return 0;
}
