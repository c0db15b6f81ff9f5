// Reading the status branch back within its limits: a hostile branch (one blob named by
// thousands of entries, a huge file, too many files, sub-directories) costs a bounded read,
// and every file left unread is listed with the reason.
#include <gmock/gmock.h>
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

TEST_F(StatusReadTest, AFileOverItsLimitIsSkippedUnreadWithTheLimitNamed) {
  ImportStatus("M 100644 inline status/a.yaml\n" + StatusFileData("aaaa") +
               "M 100644 inline status/b.yaml\n" + StatusFileData(std::string(100, 'b')) +
               "M 100644 inline status/c.yaml\n" + StatusFileData("cccc") +
               "M 100644 inline status/sub/f.yaml\n" + StatusFileData("not read: a sub-directory"));
  StatusReadLimits limits;
  limits.max_file_bytes = 50;  // b is too large
  absl::StatusOr<StatusFiles> read = Read(limits);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->files, (std::map<std::string, std::string>{{"status/a.yaml", "aaaa"},
                                                             {"status/c.yaml", "cccc"}}));
  ASSERT_EQ(read->skipped.size(), 1u);
  EXPECT_EQ(read->skipped[0].path, "status/b.yaml");
  EXPECT_EQ(read->skipped[0].reason, "too_large");
  EXPECT_EQ(read->skipped[0].detail, "100 bytes, over the limit of 50 bytes per status file");
}

// A wide tree is refused whole, with one error rather than a skipped entry per file past the
// limit (a million of them was a million log lines per read) and without the files before the
// cut (the clusters past it would otherwise start without memory).
TEST_F(StatusReadTest, ATreeWithMoreEntriesThanTheLimitIsRefusedAsAWhole) {
  std::string lines;
  for (int i = 0; i < 6; ++i) {
    lines += fmt::format("M 100644 inline status/c{}.yaml\n", i) +
             StatusFileData(fmt::format("cluster: c{}\n", i));
  }
  ImportStatus(lines);
  StatusReadLimits limits;
  limits.max_files = 6;
  absl::StatusOr<StatusFiles> read = Read(limits);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->files.size(), 6u);
  limits.max_files = 5;
  read = Read(limits);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(IsStatusTreeOverBudget(read.status()));
  EXPECT_THAT(std::string(read.status().message()),
              ::testing::HasSubstr("status/ holds 6 entries, more than the limit of 5 files"));
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
  limits.max_files = 20;  // a listing of at most 20 × 128 bytes; 100 entries take 3,800
  absl::StatusOr<StatusFiles> read = Read(limits);
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(IsStatusTreeOverBudget(read.status()));
  EXPECT_THAT(std::string(read.status().message()),
              ::testing::HasSubstr("status/'s listing is 3800 bytes, over its budget of 2560"));
}

// Nothing is written onto a tree over budget: a record would rebuild the whole listing, and
// the reconciler records before it acts, so it does not act either.
TEST_F(StatusReadTest, NoRecordIsWrittenOntoATreeOverBudget) {
  std::string lines;
  for (int i = 0; i < 30; ++i) lines += fmt::format("M 100644 :1 status/z{:04}.yaml\n", i);
  ImportStatus(lines, "blob\nmark :1\n" + StatusFileData("x"));
  const std::string before = upstream_.Tip(kReadStatusBranch);
  auto source = OpenSource(Config("file://" + upstream_.bare().string()));
  ASSERT_NE(source, nullptr);
  StatusWriterConfig config;
  config.read_limits.max_files = 20;
  auto writer = GitStatusWriter::Create(*source, config, env_);
  ASSERT_TRUE(writer.ok()) << writer.status();
  StatusUpdate update;
  update.files["status/a.yaml"] = "cluster: a\n";
  update.message = "a: Idle";
  absl::StatusOr<StatusCommit> written = (*writer)->Write(update);
  ASSERT_FALSE(written.ok());
  EXPECT_TRUE(IsStatusTreeOverBudget(written.status())) << written.status();
  EXPECT_EQ(upstream_.Tip(kReadStatusBranch), before);
}

}  // namespace
}  // namespace tr::gitsource::testing
