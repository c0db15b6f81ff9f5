// The observed-state file of `plan --observed`.
#include "core/observed_decode.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto decoded = tr::core::DecodeObservedFleet("observed.yaml", tr::fuzz::AsText(data, size));
  (void)decoded;
  return 0;
}
