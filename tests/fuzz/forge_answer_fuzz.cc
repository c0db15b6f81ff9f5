// Answers of the forge's API: the comment list, a created object's id, the pull request of a
// commit for each forge.
#include "reconciler/forge/forge_requests.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tr::reconciler::forge::Forge;
  const tr::fuzz::Selected selected = tr::fuzz::Select(data, size, 6);
  switch (selected.choice) {
    case 0: (void)tr::reconciler::forge::ParseComments(selected.rest); break;
    case 1: (void)tr::reconciler::forge::ParseCreatedId(selected.rest); break;
    case 2: (void)tr::reconciler::forge::ParsePullOfCommit(Forge::kGithub, selected.rest); break;
    case 3: (void)tr::reconciler::forge::ParsePullOfCommit(Forge::kGitlab, selected.rest); break;
    default: (void)tr::reconciler::forge::ParsePullOfCommit(Forge::kGitea, selected.rest); break;
  }
  return 0;
}
