#include "core/pending_mark.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tr::core {
namespace {

constexpr std::string_view kSchematic =
    "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";
constexpr std::string_view kBoot = "0f3c9a6e-2b1d-4c7e-9a51-6d2e8f0b7c43";

Version V(std::string_view text) { return *ParseTalosVersion(text); }

TEST(PendingMarkTest, IsOneLineWithTheVersionFirstAndTheEmptyFieldsLeftOut) {
  EXPECT_EQ(EncodePendingMark({V("1.13.2"), std::string(kSchematic), std::string(kBoot)}),
            "v1.13.2 schematic=" + std::string(kSchematic) + " boot=" + std::string(kBoot));
  EXPECT_EQ(EncodePendingMark({V("1.13.2"), "", std::string(kBoot)}),
            "v1.13.2 boot=" + std::string(kBoot));
  EXPECT_EQ(EncodePendingMark({V("1.13.2"), std::string(kSchematic), ""}),
            "v1.13.2 schematic=" + std::string(kSchematic));
  EXPECT_EQ(EncodePendingMark({V("1.13.2"), "", ""}), "v1.13.2");
}

TEST(PendingMarkTest, ReadsBackWhatItWrote) {
  for (const PendingInstallMark& mark : std::vector<PendingInstallMark>{
           {V("1.13.2"), std::string(kSchematic), std::string(kBoot)},
           {V("1.13.2"), "", std::string(kBoot)},
           {V("1.14.0-alpha.1"), std::string(kSchematic), ""},
           {V("v1.12.0-alpha.1-23-g1a2b3c4d-dirty"), "", "boot_1.a"},
           {V("1.11.6"), "", ""}}) {
    const std::string text = EncodePendingMark(mark);
    const std::optional<PendingInstallMark> read = ParsePendingMark(text);
    ASSERT_TRUE(read.has_value()) << text;
    EXPECT_EQ(*read, mark) << text;
    EXPECT_EQ(read->target.Tag(), mark.target.Tag()) << text;
    EXPECT_EQ(EncodePendingMark(*read), text);
  }
}

TEST(PendingMarkTest, TakesTheFieldsInEitherOrderAndTheVersionWithoutItsV) {
  const std::optional<PendingInstallMark> read = ParsePendingMark(
      "1.13.2 boot=" + std::string(kBoot) + " schematic=" + std::string(kSchematic));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(*read, (PendingInstallMark{V("1.13.2"), std::string(kSchematic), std::string(kBoot)}));
}

TEST(PendingMarkTest, RefusesAnyTextThatDoesNotParseAsAWhole) {
  const std::string schematic(kSchematic), boot(kBoot);
  for (const std::string& text : std::vector<std::string>{
           "",
           " ",
           "v1.13",
           "vx.13.2",
           "latest",
           "schematic=" + schematic,                    // no version
           "boot=" + boot + " v1.13.2",                 // not first
           " v1.13.2",                                  // stray spaces
           "v1.13.2 ",
           "v1.13.2  boot=" + boot,
           "v1.13.2\tboot=" + boot,
           "v1.13.2\n",
           "v1.13.2 boot=",                             // empty values
           "v1.13.2 schematic=",
           "v1.13.2 schematic=" + schematic.substr(1),  // not an ID
           "v1.13.2 schematic=" + std::string(64, 'A'),
           "v1.13.2 boot=" + std::string(65, 'a'),      // too long
           "v1.13.2 boot=a/b",
           "v1.13.2 boot=a=b",
           "v1.13.2 boot=" + boot + " boot=" + boot,    // repeated
           "v1.13.2 schematic=" + schematic + " schematic=" + schematic,
           "v1.13.2 image=ghcr.io/siderolabs/installer",  // unknown field
           "v1.13.2 boot",
           "v1.13.2 v1.13.3",
           std::string("v1.13.2\0 boot=x", 15)}) {
    EXPECT_EQ(ParsePendingMark(text), std::nullopt) << '"' << text << '"';
  }
}

}  // namespace
}  // namespace tr::core
