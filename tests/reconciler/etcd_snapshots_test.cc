// Where etcd snapshots go and how many are kept (reconciler/operations/etcd_snapshots.h), on a real
// directory: names that sort by time, pruning that keeps the newest N of one cluster only.
#include "reconciler/operations/etcd_snapshots.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "reconciler/runtime/private_files.h"

namespace tr::reconciler {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using ::testing::ElementsAre;

class EtcdSnapshotsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tr-etcd-snapshots-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    ASSERT_TRUE(MakePrivateDirectory(dir_).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A snapshot of `cluster` taken `at` seconds after 2026-11-22T00:00:00Z.
  fs::path Take(const std::string& cluster, int at) {
    const fs::path file = EtcdSnapshotPath(
        dir_, cluster, std::chrono::system_clock::time_point(seconds(1'795'305'600 + at)));
    EXPECT_TRUE(CreatePrivateFile(file).ok());
    return file;
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

TEST_F(EtcdSnapshotsTest, NamesSortByTime) {
  EXPECT_EQ(EtcdSnapshotPath("/s", "prod",
                             std::chrono::system_clock::time_point(seconds(1'795'305'600 + 3723))),
            fs::path("/s/prod-2026-11-22T01-02-03Z.snapshot"));
}

TEST_F(EtcdSnapshotsTest, KeepsTheNewestOfOneClusterOnly) {
  const fs::path oldest = Take("prod", 0);
  const fs::path older = Take("prod", 60);
  Take("prod", 3600);
  Take("prod", 7200);
  Take("prod", 86400);
  Take("prod-eu", 0);  // another cluster whose name starts with "prod-"
  std::ofstream(dir_ / "prod-notes.txt") << "kept\n";
  EtcdSnapshotIndex index(dir_);
  const auto pruned = index.Prune("prod", 3);
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  EXPECT_THAT(*pruned, ElementsAre(oldest, older));
  EXPECT_THAT(Names(), ElementsAre("prod-2026-11-22T01-00-00Z.snapshot",
                                   "prod-2026-11-22T02-00-00Z.snapshot",
                                   "prod-2026-11-23T00-00-00Z.snapshot",
                                   "prod-eu-2026-11-22T00-00-00Z.snapshot", "prod-notes.txt"));
  const auto again = index.Prune("prod", 3);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty());
}

// The executor's index: the directory is listed once, at the first prune (which finds what an
// earlier process left), and what this process writes after is pruned from the index.
TEST_F(EtcdSnapshotsTest, AnIndexListsTheDirectoryOnceAndPrunesWhatItIsTold) {
  const fs::path left = Take("prod", 0);  // by an earlier process
  Take("prod-eu", 0);
  EtcdSnapshotIndex index(dir_);
  std::vector<fs::path> written;
  for (int at : {60, 120, 180}) {
    written.push_back(Take("prod", at));
    index.Added("prod", written.back());
    ASSERT_TRUE(index.Prune("prod", 2).ok());
  }
  EXPECT_FALSE(fs::exists(left));
  EXPECT_THAT(Names(), ElementsAre("prod-2026-11-22T00-02-00Z.snapshot",
                                   "prod-2026-11-22T00-03-00Z.snapshot",
                                   "prod-eu-2026-11-22T00-00-00Z.snapshot"));
  // One deleted by hand meanwhile is no error.
  fs::remove(written[1]);
  written.push_back(Take("prod", 240));
  index.Added("prod", written.back());
  const auto pruned = index.Prune("prod", 2);
  ASSERT_TRUE(pruned.ok()) << pruned.status();
  EXPECT_THAT(*pruned, ElementsAre(written[1]));
  EXPECT_THAT(Names(), ElementsAre("prod-2026-11-22T00-03-00Z.snapshot",
                                   "prod-2026-11-22T00-04-00Z.snapshot",
                                   "prod-eu-2026-11-22T00-00-00Z.snapshot"));
  EXPECT_EQ(index.listings(), 1);
}

TEST_F(EtcdSnapshotsTest, DirectoryAndFilesAreTheOwnersOnly) {
  const fs::path file = Take("prod", 0);
  EXPECT_EQ(fs::status(dir_).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  // A file that was readable by all is made private when created again.
  fs::permissions(file, fs::perms::all);
  ASSERT_TRUE(CreatePrivateFile(file).ok());
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
}

}  // namespace
}  // namespace tr::reconciler
