#include "core/base64.h"

#include <gtest/gtest.h>

namespace tr::core {
namespace {

TEST(Base64Test, DecodesWithAndWithoutPadding) {
  EXPECT_EQ(DecodeBase64(""), std::string());
  EXPECT_EQ(DecodeBase64("Zg=="), "f");
  EXPECT_EQ(DecodeBase64("Zm8="), "fo");
  EXPECT_EQ(DecodeBase64("Zm9v"), "foo");
  EXPECT_EQ(DecodeBase64("Zm9vYmFy"), "foobar");
  EXPECT_EQ(DecodeBase64("AP8A/w=="), std::string("\0\xff\0\xff", 4));
}

TEST(Base64Test, IgnoresLineBreaksOfWrappedInput) {
  EXPECT_EQ(DecodeBase64("Zm9v\nYmFy\r\n"), "foobar");
  EXPECT_EQ(DecodeBase64(" Zm9v\tYmFy "), "foobar");
}

TEST(Base64Test, RefusesMalformedInput) {
  for (std::string_view bad :
       {"Zm9", "Zm9vY", "Zm=v", "=Zm9", "Zg==Zm9v", "Zm9v!mFy", "Zm9-YmFy", "Zg=a", "Z==="}) {
    EXPECT_EQ(DecodeBase64(bad), std::nullopt) << bad;
  }
}

TEST(Base64Test, EncodesRfc4648sVectorsAndEveryByteBackAgain) {
  // RFC 4648 §10.
  const std::pair<std::string_view, std::string_view> vectors[] = {{"", ""},
                                                                   {"f", "Zg=="},
                                                                   {"fo", "Zm8="},
                                                                   {"foo", "Zm9v"},
                                                                   {"foob", "Zm9vYg=="},
                                                                   {"fooba", "Zm9vYmE="},
                                                                   {"foobar", "Zm9vYmFy"}};
  for (const auto& [bytes, text] : vectors) EXPECT_EQ(EncodeBase64(bytes), text) << bytes;
  std::string every;
  for (int b = 0; b < 256; ++b) every.push_back(static_cast<char>(b));
  for (size_t n = 0; n <= every.size(); n += 37) {
    EXPECT_EQ(DecodeBase64(EncodeBase64(every.substr(0, n))), every.substr(0, n)) << n;
  }
}

}  // namespace
}  // namespace tr::core
