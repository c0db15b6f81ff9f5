// The Image Factory client's reading of answers and URLs, and the schematic ID cache.
#include "reconciler/clients/factory/image_factory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "reconciler/clients/factory/schematic_ids.h"
#include "tests/support/process.h"

namespace tr::reconciler::factory {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kId[] = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";

TEST(ImageFactoryAnswerTest, ASchematicAnswerHasA64HexId) {
  EXPECT_EQ(*SchematicIdOfAnswer(std::string(R"({"id": ")") + kId + "\"}"), kId);
  EXPECT_FALSE(SchematicIdOfAnswer(R"({"id": "abc"})").ok());
  EXPECT_FALSE(SchematicIdOfAnswer(R"({"id": 7})").ok());
  EXPECT_FALSE(SchematicIdOfAnswer("not json").ok());
  EXPECT_FALSE(SchematicIdOfAnswer(std::string(R"({"id": ")") + std::string(64, 'A') + "\"}").ok());
}

TEST(ImageFactoryAnswerTest, VersionsAreTheExactReleasesSorted) {
  auto versions = VersionsOfAnswer(R"(["v1.13.0", "v1.12.1", "v1.14.0-beta.0", "latest", 3])");
  ASSERT_TRUE(versions.ok()) << versions.status();
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].ToString(), "1.12.1");
  EXPECT_EQ((*versions)[1].ToString(), "1.13.0");
  EXPECT_FALSE(VersionsOfAnswer(R"({"versions": []})").ok());
}

TEST(ImageFactoryAnswerTest, ExtensionNamesAreReadSortedAndUnique) {
  auto names = ExtensionNamesOfAnswer(
      R"([{"name": "siderolabs/qemu-guest-agent", "ref": "r"}, {"name": "siderolabs/iscsi-tools"},
          {"name": "siderolabs/iscsi-tools"}])");
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_THAT(*names, ElementsAre("siderolabs/iscsi-tools", "siderolabs/qemu-guest-agent"));
  EXPECT_FALSE(ExtensionNamesOfAnswer(R"([{"ref": "r"}])").ok());
  EXPECT_FALSE(ExtensionNamesOfAnswer("{}").ok());
}

TEST(SchematicKeyTest, DependsOnTheFactoryAndTheContent) {
  EXPECT_EQ(SchematicKey("https://a", "{}\n"), SchematicKey("https://a", "{}\n"));
  EXPECT_NE(SchematicKey("https://a", "{}\n"), SchematicKey("https://b", "{}\n"));
  EXPECT_NE(SchematicKey("https://a", "{}\n"), SchematicKey("https://a", "{} \n"));
  EXPECT_EQ(SchematicKey("", "").size(), 64u);
}

struct CountingCreator {
  int calls = 0;
  absl::Status fail = absl::OkStatus();
  SchematicIds::Creator Fn() {
    return [this](std::string_view, std::string_view) -> absl::StatusOr<std::string> {
      ++calls;
      if (!fail.ok()) return fail;
      return std::string(kId);
    };
  }
};

TEST(SchematicIdsTest, AsksTheFactoryOncePerSchematicAndRemembersAcrossARestart) {
  gitsource::testing::TempDir dir;
  const std::filesystem::path ids_dir = dir.path() / "schematic-ids";
  CountingCreator factory;
  {
    SchematicIds ids(ids_dir, factory.Fn());
    EXPECT_EQ(ids.Known("https://f", "{}\n"), std::nullopt);
    EXPECT_EQ(*ids.Resolve("https://f", "{}\n"), kId);
    EXPECT_EQ(*ids.Resolve("https://f", "{}\n"), kId);
    EXPECT_EQ(factory.calls, 1);
  }
  // A restart with the factory down still knows it; another schematic needs the factory.
  factory.fail = absl::UnavailableError("POST https://f/schematics: connection refused");
  SchematicIds restarted(ids_dir, factory.Fn());
  EXPECT_EQ(*restarted.Resolve("https://f", "{}\n"), kId);
  EXPECT_EQ(factory.calls, 1);
  auto other = restarted.Resolve("https://f", "customization: {}\n");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(other.status().message(), HasSubstr("https://f/schematics"));
  EXPECT_EQ(factory.calls, 2);
  EXPECT_EQ(std::filesystem::status(ids_dir).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
}

TEST(SchematicIdsTest, AFileThatIsNotAnIdIsIgnoredAndReplaced) {
  gitsource::testing::TempDir dir;
  CountingCreator factory;
  std::filesystem::create_directories(dir.path());
  std::ofstream(dir.path() / SchematicKey("https://f", "{}\n")) << "../../etc/passwd\n";
  SchematicIds ids(dir.path(), factory.Fn());
  EXPECT_EQ(*ids.Resolve("https://f", "{}\n"), kId);
  EXPECT_EQ(factory.calls, 1);
  std::ifstream in(dir.path() / SchematicKey("https://f", "{}\n"));
  std::string stored;
  std::getline(in, stored);
  EXPECT_EQ(stored, kId);
}

}  // namespace
}  // namespace tr::reconciler::factory
