// A cluster profile from a pull request or the watched branch (clusters/<name>.yaml), decoded
// strictly: no input may crash, hang or exhaust the decoder; bad input is diagnostics.
#include "core/profile_decode.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto decoded = tr::core::DecodeClusterProfile("clusters/prod-eu-1.yaml",
                                                      tr::fuzz::AsText(data, size), {});
  (void)decoded;
  return 0;
}
