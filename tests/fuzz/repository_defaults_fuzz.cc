// reconciler.yaml from a pull request or the watched branch, decoded strictly.
#include "core/repository_defaults_decode.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto decoded =
      tr::core::DecodeRepositoryDefaults("reconciler.yaml", tr::fuzz::AsText(data, size));
  (void)decoded;
  return 0;
}
