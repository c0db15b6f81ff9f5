// SSH commit signatures (from the commits of the watched branch) and the allowed-signers file;
// a signature that parses is also checked against the input, so the key and signature
// decoders run too.
#include "gitsource/sshsig.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tr::fuzz::Selected selected = tr::fuzz::Select(data, size, 2);
  if (selected.choice == 0) {
    const auto signature = tr::gitsource::ParseSshSignature(selected.rest);
    if (signature.ok()) (void)tr::gitsource::CheckSshSignature(*signature, selected.rest);
  } else {
    const auto signers = tr::gitsource::ParseAllowedSigners(selected.rest);
    if (signers.ok()) {
      for (const auto& signer : *signers) (void)tr::gitsource::SshKeyFingerprint(signer.public_key);
    }
  }
  return 0;
}
