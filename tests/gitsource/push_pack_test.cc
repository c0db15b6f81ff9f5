// PackWithoutDeltas (gitsource/push_pack.h): the packs a handle builds after it hold no delta,
// as `git verify-pack` reads them, while a handle of its own, such as the mirror's compaction
// uses, still finds the deltas, and the repository's own configuration is not changed.
#include "gitsource/push_pack.h"

#include <git2.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gitsource/libgit2_util.h"
#include "tests/support/process.h"

namespace tr::gitsource::testing {
namespace {

using PackbuilderPtr =
    std::unique_ptr<git_packbuilder, GitFree<git_packbuilder, git_packbuilder_free>>;

class PushPackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EnsureLibgit2();
    MustRun({"git", "init", "--quiet", "--bare", repo_dir_.string()});
    RepositoryPtr repo = Open();
    // Status files as a status commit carries them: alike, one per cluster.
    for (int i = 0; i < 40; ++i) {
      std::string content = fmt::format("cluster: c-{}\nphase: Ready\nnodes:\n", i);
      for (int n = 0; n < 5; ++n) {
        content += fmt::format("  - name: c-{}-n{}\n    talos: v1.12.0\n    ready: true\n", i, n);
      }
      git_oid id;
      ASSERT_EQ(git_blob_create_from_buffer(&id, repo.get(), content.data(), content.size()), 0);
      blobs_.push_back(id);
    }
  }

  RepositoryPtr Open() const {
    git_repository* raw = nullptr;
    EXPECT_EQ(git_repository_open_bare(&raw, repo_dir_.c_str()), 0);
    return RepositoryPtr(raw);
  }

  // Packs every blob through `repo` into `dir`, then counts the deltas git reads in the pack.
  int DeltasInAPackOf(git_repository* repo, const std::filesystem::path& dir) {
    git_packbuilder* raw = nullptr;
    EXPECT_EQ(git_packbuilder_new(&raw, repo), 0);
    const PackbuilderPtr pb(raw);
    for (const git_oid& id : blobs_) EXPECT_EQ(git_packbuilder_insert(pb.get(), &id, nullptr), 0);
    std::filesystem::create_directories(dir);
    EXPECT_EQ(git_packbuilder_write(pb.get(), dir.c_str(), 0, nullptr, nullptr), 0);
    const std::string pack =
        (dir / fmt::format("pack-{}.idx", OidHex(*git_packbuilder_hash(pb.get())))).string();
    std::istringstream listing(MustRun({"git", "verify-pack", "-v", pack}));
    int deltas = 0;
    for (std::string line; std::getline(listing, line);) {
      // "<id> blob <size> <size in pack> <offset> <depth> <base id>": a delta names its base.
      std::istringstream fields(line);
      std::vector<std::string> words;
      for (std::string word; fields >> word;) words.push_back(word);
      if (words.size() == 7 && words[1] == "blob") ++deltas;
    }
    return deltas;
  }

  std::string RepositoryConfig() const {
    std::ifstream in(repo_dir_ / "config");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  TempDir tmp_;
  std::filesystem::path repo_dir_ = tmp_ / "repo.git";
  std::vector<git_oid> blobs_;
};

TEST_F(PushPackTest, AHandleThatPacksWithoutDeltasWritesNoneAndOtherHandlesStillDo) {
  const std::string config = RepositoryConfig();
  RepositoryPtr plain = Open();
  EXPECT_GT(DeltasInAPackOf(plain.get(), tmp_ / "plain"), 20) << "alike blobs found no delta";

  RepositoryPtr pushing = Open();
  ASSERT_TRUE(PackWithoutDeltas(pushing.get()).ok());
  ASSERT_TRUE(PackWithoutDeltas(pushing.get()).ok()) << "a second push on the same handle";
  EXPECT_EQ(DeltasInAPackOf(pushing.get(), tmp_ / "pushing"), 0);

  RepositoryPtr compacting = Open();  // as the mirror's compaction opens its own
  EXPECT_GT(DeltasInAPackOf(compacting.get(), tmp_ / "compacting"), 20);
  EXPECT_EQ(RepositoryConfig(), config);
}

}  // namespace
}  // namespace tr::gitsource::testing
