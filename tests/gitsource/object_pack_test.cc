// The pack a status commit's objects are stored in (gitsource/object_pack.h), written by our
// own code, checked by git itself: its index must be byte for byte the one `git index-pack`
// makes of the pack, and git must read every object back.
#include "gitsource/object_pack.h"

#include <git2.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gitsource/libgit2_util.h"
#include "gitsource/new_objects.h"
#include "gitsource/pack_rollup.h"
#include "tests/support/process.h"

namespace tr::gitsource::testing {
namespace {

class ObjectPackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EnsureLibgit2();
    MustRun({"git", "init", "--quiet", "--bare", repo_dir_.string()});
  }

  RepositoryPtr Open() const {
    git_repository* raw = nullptr;
    EXPECT_EQ(git_repository_open_bare(&raw, repo_dir_.c_str()), 0);
    return RepositoryPtr(raw);
  }

  // A blob written through `repo`; its id in hexadecimal.
  static std::string Blob(git_repository* repo, const std::string& content) {
    git_oid id;
    EXPECT_EQ(git_blob_create_from_buffer(&id, repo, content.data(), content.size()), 0);
    return OidHex(id);
  }

  // Writes `content` through a handle of its own and stores it as a pack; its id.
  std::string PackOneBlob(const std::string& content) {
    RepositoryPtr repo = Open();
    absl::StatusOr<NewObjects*> fresh = NewObjects::Attach(repo.get());
    EXPECT_TRUE(fresh.ok());
    if (!fresh.ok()) return "";
    const std::string id = Blob(repo.get(), content);
    EXPECT_TRUE((*fresh)->StoreAsPack(repo_dir_).ok());
    EXPECT_TRUE((*fresh)->StoreAsPack(repo_dir_).ok());  // nothing since: no second pack
    return id;
  }

  std::string Git(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {"git", "-C", repo_dir_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return MustRun(argv);
  }

  TempDir tmp_;
  std::filesystem::path repo_dir_ = tmp_ / "repo.git";
};

TEST_F(ObjectPackTest, GitIndexesThePackAsWeDidAndReadsEveryObject) {
  std::map<std::string, std::string> blobs;  // id → content
  std::string commit;
  {
    RepositoryPtr repo = Open();
    absl::StatusOr<NewObjects*> fresh = NewObjects::Attach(repo.get());
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    // Sizes whose entry headers take one, two, three and four bytes; enough blobs that the
    // index's fan-out table has many buckets.
    for (const std::size_t size : {0u, 15u, 16u, 2047u, 2048u, 300'000u}) {
      const std::string content(size, static_cast<char>('a' + size % 26));
      blobs[Blob(repo.get(), content)] = content;
    }
    for (int i = 0; i < 300; ++i) {
      const std::string content = fmt::format("cluster: c-{}\nphase: Ready\n", i);
      blobs[Blob(repo.get(), content)] = content;
    }
    git_treebuilder* raw_builder = nullptr;
    ASSERT_EQ(git_treebuilder_new(&raw_builder, repo.get(), nullptr), 0);
    std::unique_ptr<git_treebuilder, GitFree<git_treebuilder, git_treebuilder_free>> builder(
        raw_builder);
    int n = 0;
    for (const auto& [hex, content] : blobs) {
      git_oid id;
      ASSERT_EQ(git_oid_fromstr(&id, hex.c_str()), 0);
      ASSERT_EQ(git_treebuilder_insert(nullptr, builder.get(), fmt::format("f{}", n++).c_str(), &id,
                                       GIT_FILEMODE_BLOB),
                0);
    }
    git_oid tree_id;
    ASSERT_EQ(git_treebuilder_write(&tree_id, builder.get()), 0);
    git_tree* raw_tree = nullptr;
    ASSERT_EQ(git_tree_lookup(&raw_tree, repo.get(), &tree_id), 0);  // read back from memory
    TreePtr tree(raw_tree);
    git_signature* raw_sig = nullptr;
    ASSERT_EQ(git_signature_new(&raw_sig, "t", "t@example.invalid", 1'700'000'000, 0), 0);
    SignaturePtr sig(raw_sig);
    git_oid commit_id;
    ASSERT_EQ(git_commit_create(&commit_id, repo.get(), nullptr, sig.get(), sig.get(), nullptr,
                                "packed\n", tree.get(), 0, nullptr),
              0);
    commit = OidHex(commit_id);
    EXPECT_TRUE(ListPacks(repo_dir_).empty()) << "stored before it was asked";
    ASSERT_TRUE((*fresh)->StoreAsPack(repo_dir_).ok());
  }
  EXPECT_TRUE(ListLooseObjects(repo_dir_).empty());
  const std::vector<PackFile> packs = ListPacks(repo_dir_);
  ASSERT_EQ(packs.size(), 1u);
  EXPECT_EQ(packs[0].objects, blobs.size() + 2);  // and the tree and the commit

  const std::filesystem::path ours = std::filesystem::path(packs[0].pack).replace_extension(".idx");
  const std::filesystem::path theirs = tmp_ / "git.idx";
  MustRun({"git", "index-pack", "-o", theirs.string(), packs[0].pack.string()});
  EXPECT_TRUE(ReadFile(ours) == ReadFile(theirs)) << "our index differs from git's";
  Git({"verify-pack", ours.string()});

  Git({"update-ref", "refs/heads/packed", commit});
  Git({"fsck", "--strict", "--no-dangling"});
  for (const auto& [hex, content] : blobs) {
    // git's output loses a trailing newline; compare sizes and a piece instead of whole texts.
    EXPECT_EQ(Git({"cat-file", "-s", hex}), std::to_string(content.size()));
  }
  const std::string sample = blobs.rbegin()->second;
  EXPECT_EQ(Git({"cat-file", "blob", blobs.rbegin()->first}) + "\n", sample);
}

// What the repository already has is not written again: a second handle that writes the same
// blob, and one new, stores a pack of the new one only.
TEST_F(ObjectPackTest, OnlyWhatIsNewIsStored) {
  const std::string old_blob = PackOneBlob("old\n");
  EXPECT_EQ(ListPacks(repo_dir_).size(), 1u);
  RepositoryPtr repo = Open();
  absl::StatusOr<NewObjects*> fresh = NewObjects::Attach(repo.get());
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(Blob(repo.get(), "old\n"), old_blob);
  const std::string new_blob = Blob(repo.get(), "new\n");
  ASSERT_TRUE((*fresh)->StoreAsPack(repo_dir_).ok());
  const std::vector<PackFile> packs = ListPacks(repo_dir_);
  ASSERT_EQ(packs.size(), 2u);
  for (const PackFile& pack : packs) EXPECT_EQ(pack.objects, 1u) << pack.pack;
  EXPECT_EQ(Git({"cat-file", "blob", new_blob}), "new");
  EXPECT_TRUE(ListLooseObjects(repo_dir_).empty());
}

// Add writes as libgit2's own write would (without its rescan of the packs): git's id, a read
// back through the handle at once, and nothing the repository or the store already has.
TEST_F(ObjectPackTest, AddKeepsOnlyWhatIsNewUnderGitsId) {
  const std::string old_blob = PackOneBlob("old\n");
  RepositoryPtr repo = Open();
  absl::StatusOr<NewObjects*> fresh = NewObjects::Attach(repo.get());
  ASSERT_TRUE(fresh.ok());
  absl::StatusOr<git_oid> old_id = (*fresh)->Add("old\n", GIT_OBJECT_BLOB);
  ASSERT_TRUE(old_id.ok()) << old_id.status();
  EXPECT_EQ(OidHex(*old_id), old_blob);
  absl::StatusOr<git_oid> new_id = (*fresh)->Add("new\n", GIT_OBJECT_BLOB);
  ASSERT_TRUE(new_id.ok()) << new_id.status();
  absl::StatusOr<git_oid> again = (*fresh)->Add("new\n", GIT_OBJECT_BLOB);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(git_oid_equal(&*again, &*new_id));
  git_blob* raw_blob = nullptr;
  ASSERT_EQ(git_blob_lookup(&raw_blob, repo.get(), &*new_id), 0);
  EXPECT_EQ(std::string(static_cast<const char*>(git_blob_rawcontent(raw_blob)),
                        static_cast<std::size_t>(git_blob_rawsize(raw_blob))),
            "new\n");
  git_blob_free(raw_blob);

  ASSERT_TRUE((*fresh)->StoreAsPack(repo_dir_).ok());
  const std::vector<PackFile> packs = ListPacks(repo_dir_);
  ASSERT_EQ(packs.size(), 2u);
  for (const PackFile& pack : packs) EXPECT_EQ(pack.objects, 1u) << pack.pack;
  EXPECT_EQ(Git({"cat-file", "blob", OidHex(*new_id)}), "new");
  EXPECT_TRUE(ListLooseObjects(repo_dir_).empty());
}

// Packs git made (with deltas by offset), one sharing objects with another, and a loose object
// rolled up: the packs that can be are copied as they are, the rest packed one by one, and
// git indexes the new pack as we did and finds every object in it alone.
TEST_F(ObjectPackTest, PacksAreCopiedTogetherDeltasAndAll) {
  const std::filesystem::path work = tmp_ / "work";
  MustRun({"git", "init", "--quiet", work.string()});
  std::string text;
  for (int i = 0; i < 2000; ++i) text += fmt::format("line {}\n", i);
  std::vector<std::string> commits;
  for (int version = 1; version <= 3; ++version) {
    text += fmt::format("version {}\n", version);
    WriteFile(work / "big.txt", text);
    MustRun({"git", "-C", work.string(), "add", "big.txt"});
    MustRun({"git", "-C", work.string(), "commit", "--quiet", "-m", fmt::format("v{}", version)});
    commits.push_back(MustRun({"git", "-C", work.string(), "rev-parse", "HEAD"}));
  }
  const auto pack = [&](const std::vector<std::string>& revs) {
    std::vector<std::string> argv = {"git", "-C", work.string(), "rev-list", "--objects"};
    argv.insert(argv.end(), revs.begin(), revs.end());
    RunOptions options;
    options.input = MustRun(argv) + "\n";
    MustRun({"git", "-C", work.string(), "pack-objects", "--quiet", "--delta-base-offset",
             (repo_dir_ / "objects/pack/pack").string()},
            options);
  };
  pack({commits[0]});                    // the first version
  pack({commits[2], "^" + commits[0]});  // versions 2 and 3, one a delta of the other
  pack({commits[2], "^" + commits[1]});  // version 3 again: shares every object
  RunOptions loose_input;
  loose_input.input = "loose\n";
  const std::string loose =
      MustRun({"git", "-C", repo_dir_.string(), "hash-object", "-w", "--stdin"}, loose_input);
  ASSERT_EQ(ListPacks(repo_dir_).size(), 3u);
  ASSERT_EQ(ListLooseObjects(repo_dir_).size(), 1u);
  const std::vector<PackFile> old_packs = ListPacks(repo_dir_);
  const std::vector<LooseObject> old_loose = ListLooseObjects(repo_dir_);

  RepositoryPtr repo = Open();
  git_odb* raw_odb = nullptr;
  ASSERT_EQ(git_repository_odb(&raw_odb, repo.get()), 0);
  const OdbPtr odb(raw_odb);
  absl::StatusOr<std::string> written = CopyIntoOnePack(repo_dir_, odb.get(), old_packs, old_loose);
  ASSERT_TRUE(written.ok()) << written.status();
  for (const PackFile& old : old_packs) {
    std::filesystem::remove(old.pack);
    std::filesystem::remove(std::filesystem::path(old.pack).replace_extension(".idx"));
  }
  std::filesystem::remove(old_loose[0].path);

  const std::vector<PackFile> packs = ListPacks(repo_dir_);
  ASSERT_EQ(packs.size(), 1u);
  EXPECT_EQ(packs[0].pack.filename().string(), "pack-" + *written + ".pack");
  EXPECT_EQ(packs[0].objects, 3u * 3u + 1u);  // three commits, trees and blobs; the loose one
  const std::filesystem::path ours = std::filesystem::path(packs[0].pack).replace_extension(".idx");
  const std::filesystem::path theirs = tmp_ / "git.idx";
  MustRun({"git", "index-pack", "-o", theirs.string(), packs[0].pack.string()});
  EXPECT_TRUE(ReadFile(ours) == ReadFile(theirs)) << "our index differs from git's";
  const std::string listing = Git({"verify-pack", "-v", ours.string()});
  EXPECT_NE(listing.find("chain length = 1"), std::string::npos) << "no delta was copied:\n"
                                                                 << listing;
  Git({"update-ref", "refs/heads/main", commits[2]});
  Git({"fsck", "--strict", "--no-dangling"});
  EXPECT_EQ(Git({"show", commits[0] + ":big.txt"}).size() + 1, text.size() - 20);
  EXPECT_EQ(Git({"show", commits[2] + ":big.txt"}) + "\n", text);
  EXPECT_EQ(Git({"cat-file", "-t", loose}), "blob");
}

}  // namespace
}  // namespace tr::gitsource::testing
