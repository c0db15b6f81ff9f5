// Percent-encoding: the unreserved characters stay, every other byte is %XX in upper case.
#include "base/percent_encoding.h"

#include <gtest/gtest.h>

namespace tr {
namespace {

TEST(PercentEncodeTest, KeepsUnreservedAndEncodesEveryOtherByte) {
  const struct {
    std::string_view in, out;
  } cases[] = {
      {"", ""},
      {"AZaz09-._~", "AZaz09-._~"},
      {"group/project", "group%2Fproject"},
      {"app=reconciler,tier in (a,b)", "app%3Dreconciler%2Ctier%20in%20%28a%2Cb%29"},
      {"repository:talos/installer:pull", "repository%3Atalos%2Finstaller%3Apull"},
      {"!*'+&?#%", "%21%2A%27%2B%26%3F%23%25"},
      {"\xc3\xa9\x01", "%C3%A9%01"},
  };
  for (const auto& c : cases) EXPECT_EQ(PercentEncode(c.in), c.out) << c.in;
}

}  // namespace
}  // namespace tr
