// Answers of the forge's API: the comment list, a created object's id, the pull request of a
// commit for each forge.
#include "reconciler/clients/forge/forge_dialect.h"
#include "reconciler/clients/forge/forge_requests.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace forge = tr::reconciler::forge;
  const tr::fuzz::Selected selected = tr::fuzz::Select(data, size, 6);
  switch (selected.choice) {
    case 0: (void)forge::ParseComments(selected.rest); break;
    case 1: (void)forge::ParseCreatedId(selected.rest); break;
    case 2: (void)forge::FindApiDialect("github")->ParsePullOfCommit(selected.rest); break;
    case 3: (void)forge::FindApiDialect("gitlab")->ParsePullOfCommit(selected.rest); break;
    default: (void)forge::FindApiDialect("gitea")->ParsePullOfCommit(selected.rest); break;
  }
  return 0;
}
