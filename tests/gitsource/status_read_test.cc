// Reading the status branch back within its limits: a hostile branch (one blob named by
// thousands of entries, a huge file, too many files, sub-directories) costs a bounded read,
// and every file left unread is listed with the reason.
#include <gtest/gtest.h>

#include <algorithm>

#include "fmt/format.h"
#include "gitsource/git_source.h"
#include "gitsource/status_writer.h"
#include "tests/gitsource/fixture.h"
#include "tests/support/simulated_env.h"

namespace tr::gitsource::testing {
namespace {

constexpr char kReadStatusBranch[] = "talos-reconciler/status";

std::string StatusFileData(const std::string& content) {
  return fmt::format("data {}\n{}\n", content.size(), content);
}

class StatusReadTest : public UpstreamTest {
 protected:
  // A root commit on the status branch with `modifications` (fast-import "M" lines).
  void ImportStatus(const std::string& modifications, const std::string& blobs = "") {
    upstream_.FastImport(fmt::format(
        "{}commit refs/heads/{}\ncommitter Mallory <m@example.com> 1700000000 +0000\n{}{}\n",
        blobs, kReadStatusBranch, StatusFileData("hostile status"), modifications));
  }

  absl::StatusOr<StatusFiles> Read(const StatusReadLimits& limits) {
    auto source = OpenSource(Config("file://" + upstream_.bare().string()));
    if (source == nullptr) return absl::InternalError("no source");
    StatusWriterConfig config;
    config.read_limits = limits;
    auto writer = GitStatusWriter::Create(*source, config, env_);
    if (!writer.ok()) return writer.status();
    return (*writer)->ReadLatest();
  }

  std::map<std::string, int> Reasons(const StatusFiles& files) {
    std::map<std::string, int> reasons;
    for (const SkippedStatusFile& skipped : files.skipped) ++reasons[skipped.reason];
    return reasons;
  }

  tr::test_support::SimulatedEnv env_{std::chrono::system_clock::from_time_t(1'750'000'000)};
};

TEST_F(StatusReadTest, OneBlobNamedThousandsOfTimesIsReadOnce) {
  std::string lines = "M 100644 inline status/a.yaml\n" + StatusFileData("cluster: a\n");
  for (int i = 0; i < 2000; ++i) lines += fmt::format("M 100644 :1 status/z{:04}.yaml\n", i);
  ImportStatus(lines, "blob\nmark :1\n" + StatusFileData(std::string(512 << 10, 'x')));
  absl::StatusOr<StatusFiles> read = Read({});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->files.size(), 2u);
  EXPECT_EQ(read->files.at("status/a.yaml"), "cluster: a\n");
  EXPECT_EQ(read->files.at("status/z0000.yaml").size(), std::size_t{512} << 10);
  EXPECT_EQ(Reasons(*read), (std::map<std::string, int>{{"duplicate", 1999}}));
  EXPECT_EQ(read->skipped.back().path, "status/z1999.yaml");
  EXPECT_EQ(read->skipped.back().detail, "the same content as status/z0000.yaml");
}

TEST_F(StatusReadTest, FilesPastEachLimitAreSkippedUnreadWithTheLimitNamed) {
  ImportStatus("M 100644 inline status/a.yaml\n" + StatusFileData("aaaa") +
               "M 100644 inline status/b.yaml\n" + StatusFileData(std::string(100, 'b')) +
               "M 100644 inline status/c.yaml\n" + StatusFileData("cccc") +
               "M 100644 inline status/d.yaml\n" + StatusFileData("dddd") +
               "M 100644 inline status/e.yaml\n" + StatusFileData("eeee") +
               "M 100644 inline status/sub/f.yaml\n" + StatusFileData("not read: a sub-directory"));
  StatusReadLimits limits;
  limits.max_file_bytes = 50;  // b is too large
  limits.max_files = 2;        // a and c are read; d and e would be the third and fourth
  absl::StatusOr<StatusFiles> read = Read(limits);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->files, (std::map<std::string, std::string>{{"status/a.yaml", "aaaa"},
                                                             {"status/c.yaml", "cccc"}}));
  ASSERT_EQ(read->skipped.size(), 3u);
  EXPECT_EQ(read->skipped[0].path, "status/b.yaml");
  EXPECT_EQ(read->skipped[0].reason, "too_large");
  EXPECT_EQ(read->skipped[0].detail, "100 bytes, over the limit of 50 bytes per status file");
  EXPECT_EQ(read->skipped[1].path, "status/d.yaml");
  EXPECT_EQ(read->skipped[1].reason, "too_many");
  EXPECT_EQ(read->skipped[1].detail, "past the limit of 2 status files");
  EXPECT_EQ(read->skipped[2].reason, "too_many");
}

TEST_F(StatusReadTest, TheTotalBudgetSkipsTheFilesPastIt) {
  ImportStatus("M 100644 inline status/a.yaml\n" + StatusFileData("aaaa") +
               "M 100644 inline status/b.yaml\n" + StatusFileData(std::string(200, 'b')) +
               "M 100644 inline status/c.yaml\n" + StatusFileData("cc"));
  StatusReadLimits limits;
  limits.max_total_bytes = 200;  // a (4) fits, b (200) would make 204, c (2) makes 6
  absl::StatusOr<StatusFiles> read = Read(limits);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->files, (std::map<std::string, std::string>{{"status/a.yaml", "aaaa"},
                                                             {"status/c.yaml", "cc"}}));
  ASSERT_EQ(read->skipped.size(), 1u);
  EXPECT_EQ(read->skipped[0].path, "status/b.yaml");
  EXPECT_EQ(read->skipped[0].reason, "over_budget");
  EXPECT_EQ(read->skipped[0].detail, "past the budget of 200 bytes of status files");
}

TEST_F(StatusReadTest, AListingLargerThanTheBudgetIsNotLoaded) {
  std::string lines;
  for (int i = 0; i < 100; ++i) lines += fmt::format("M 100644 :1 status/z{:04}.yaml\n", i);
  ImportStatus(lines, "blob\nmark :1\n" + StatusFileData("x"));
  StatusReadLimits limits;
  limits.max_total_bytes = 1000;  // 100 entries of at least 28 bytes each
  absl::StatusOr<StatusFiles> read = Read(limits);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->files.empty());
  ASSERT_EQ(read->skipped.size(), 1u);
  EXPECT_EQ(read->skipped[0].path, "status/");
  EXPECT_EQ(read->skipped[0].reason, "over_budget");
}

}  // namespace
}  // namespace tr::gitsource::testing
