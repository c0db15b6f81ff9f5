// SHA-256, plain and keyed, against published values: the empty message (FIPS 180-2), the empty
// Image Factory schematic whose ID the factory documents, and RFC 4231's first HMAC case.
#include <gtest/gtest.h>

#include "base/hmac.h"

namespace tr {
namespace {

TEST(Sha256Test, DigestsMatchPublishedValues) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("customization: {}\n"),
            "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba");
  EXPECT_EQ(HmacSha256Hex(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

}  // namespace
}  // namespace tr
