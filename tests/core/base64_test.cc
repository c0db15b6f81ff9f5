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
  for (std::string_view bad : {"Zm9", "Zm9vY", "Zm=v", "=Zm9", "Zg==Zm9v", "Zm9v!mFy",
                               "Zm9-YmFy", "Zg=a", "Z==="}) {
    EXPECT_EQ(DecodeBase64(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace tr::core
