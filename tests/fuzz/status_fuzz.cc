// A status file read back from the status branch (status/<cluster>.yaml), which anyone with
// push access to that branch could have written.
#include "core/status_decode.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto decoded =
      tr::core::DecodeClusterStatus("status/prod-eu-1.yaml", tr::fuzz::AsText(data, size));
  (void)decoded;
  return 0;
}
