// A registry's answers: the WWW-Authenticate challenge (it decides where credentials go), the
// tags it lists, read as releases, a page of the tag listing and a token server's answer.
#include "reconciler/clients/registry/installer_tags.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tr::fuzz::Selected selected = tr::fuzz::Select(data, size, 4);
  namespace registry = tr::reconciler::registry;
  switch (selected.choice) {
    case 0:
      (void)registry::ParseChallenge(selected.rest);
      break;
    case 1: {
      std::vector<std::string> tags;
      std::string_view rest = selected.rest;
      while (!rest.empty()) {
        const size_t newline = rest.find('\n');
        tags.emplace_back(rest.substr(0, newline));
        rest = newline == std::string_view::npos ? "" : rest.substr(newline + 1);
      }
      (void)registry::ReleaseTags(tags);
      break;
    }
    case 2: {
      std::vector<std::string> tags = {"v1.0.0"};
      (void)registry::AppendTags(std::string(selected.rest), 64, tags);
      break;
    }
    default:
      (void)registry::TokenOfAnswer(std::string(selected.rest));
  }
  return 0;
}
