// A pull request's head for a plan preview: fetched by its ref from the configured remote, read
// without touching the desired-state branch, and kept through compaction by a preview ref.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <shared_mutex>
#include <thread>

#include "gitsource/git_source.h"
#include "gitsource/mirror.h"
#include "gitsource/pack_rollup.h"
#include "tests/gitsource/fixture.h"
#include "tests/support/servers.h"
#include "tests/support/wait.h"

namespace tr::gitsource::testing {
namespace {

class PreviewTest : public UpstreamTest {
 protected:
  // Commits `content` as the staging profile on a side branch and publishes it as `ref`.
  std::string PublishHead(const std::string& ref, const std::string& content) {
    const std::string head =
        upstream_.Commit({{"clusters/staging.yaml", content}}, "proposal", "proposal");
    upstream_.Git({"push", "-q", "-f", "origin", "proposal:" + ref});
    upstream_.Git({"checkout", "-q", "main"});
    return head;
  }
};

TEST_F(PreviewTest, FetchesPullAndMergeRequestHeadsWithoutMovingTheBranch) {
  auto source = OpenSource(Config("file://" + upstream_.bare().string()));
  ASSERT_NE(source, nullptr);
  const std::string github = PublishHead("refs/pull/7/head", "kind: a\n");
  absl::StatusOr<ProfileSnapshot> pull = source->FetchPreview("refs/pull/7/head", {});
  ASSERT_TRUE(pull.ok()) << pull.status();
  EXPECT_EQ(pull->origin.commit, github);
  ASSERT_EQ(pull->files.size(), 3u);
  EXPECT_EQ(pull->files[1].content, "kind: a\n");

  const std::string gitlab = PublishHead("refs/merge-requests/3/head", "kind: b\n");
  absl::StatusOr<ProfileSnapshot> merge = source->FetchPreview("refs/merge-requests/3/head", {});
  ASSERT_TRUE(merge.ok()) << merge.status();
  EXPECT_EQ(merge->origin.commit, gitlab);
  // The watched branch is what a poll sees, whatever previews were fetched.
  absl::StatusOr<RemoteHead> head = source->Poll();
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->commit, desired_tip_);
}

TEST_F(PreviewTest, RefusesOtherRefsAndReportsMissingOnes) {
  auto source = OpenSource(Config("file://" + upstream_.bare().string()));
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->FetchPreview("refs/heads/main", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(source->FetchPreview("refs/pull/7/head:refs/heads/main", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(source->FetchPreview("refs/pull/99/head", {}).status().code(),
            absl::StatusCode::kNotFound);
}

// A head the watched branch's limits would take is refused as a preview: 600 profiles is
// past the preview's 500, and 9 MiB (one blob, nine entries) past its 8 MiB.
TEST_F(PreviewTest, PreviewsAreReadWithStricterLimitsThanTheBranch) {
  auto source = OpenSource(Config("file://" + upstream_.bare().string()));
  ASSERT_NE(source, nullptr);
  std::string many = "blob\nmark :1\ndata 8\nkind: x\n\n";
  many += "commit refs/pull/7/head\ncommitter T <t@example.com> 1700000000 +0000\n"
          "data 4\nmany\nfrom refs/heads/main\n";
  for (int i = 0; i < 600; ++i) many += "M 100644 :1 clusters/c" + std::to_string(i) + ".yaml\n";
  upstream_.FastImport(many + "\n");
  const std::string head = upstream_.GitBare({"rev-parse", "refs/pull/7/head"});
  absl::StatusOr<ProfileSnapshot> preview = source->FetchPreview("refs/pull/7/head", {});
  EXPECT_EQ(preview.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(preview.status().message().find(
                "more than 500 profile files: over the pull request limit of 500 files"),
            std::string::npos)
      << preview.status();
  // Refused, so not kept for a later read.
  EXPECT_NE(RunCommand({"git", "-C", (tmp_ / "state" / "mirror.git").string(), "rev-parse", "-q",
                        "--verify", "refs/previews/pull/7/head"})
                .exit_code,
            0);
  // The same commit is within the watched branch's limits.
  absl::StatusOr<ProfileSnapshot> as_branch = source->Snapshot(head);
  ASSERT_TRUE(as_branch.ok()) << as_branch.status();
  EXPECT_EQ(as_branch->files.size(), 602u);

  const std::string big(std::size_t{1} << 20, 'b');  // 1 MiB, within the per-file limit
  std::string bigger = "blob\nmark :1\ndata " + std::to_string(big.size()) + "\n" + big +
                       "\ncommit refs/pull/8/head\ncommitter T <t@example.com> 1700000000 "
                       "+0000\ndata 4\nbig!\nfrom refs/heads/main\n";
  for (int i = 0; i < 9; ++i) bigger += "M 100644 :1 clusters/b" + std::to_string(i) + ".yaml\n";
  upstream_.FastImport(bigger + "\n");
  preview = source->FetchPreview("refs/pull/8/head", {});
  EXPECT_EQ(preview.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(preview.status().message().find("over the pull request snapshot budget of 8 MiB"),
            std::string::npos)
      << preview.status();
  EXPECT_TRUE(source->Snapshot(upstream_.GitBare({"rev-parse", "refs/pull/8/head"})).ok());
}

// A pull request's fetch is capped at twice its byte budget, not at the watched branch's fetch
// cap: a head that brings junk outside clusters/ is cut while it downloads, and the mirror keeps
// none of it while the pull request stays open.
TEST_F(PreviewTest, AHeadThatBringsMoreThanTwiceThePreviewBudgetIsNotFetched) {
  const std::string noise = IncompressibleBytes(256 * 1024, 4321);
  const std::string head =
      upstream_.Commit({{"junk/noise.bin", noise}}, "junk beside the profiles", "proposal");
  upstream_.Git({"push", "-q", "-f", "origin", "proposal:refs/pull/7/head"});
  upstream_.Git({"checkout", "-q", "main"});
  GitDaemon daemon(served_);
  GitSourceConfig config = Config(daemon.Url("profiles"));
  config.preview_limits.max_total_bytes = 64 * 1024;  // a fetch of at most 128 KiB
  auto source = OpenSource(config);
  ASSERT_NE(source, nullptr);
  ASSERT_TRUE(source->Poll().ok());
  absl::StatusOr<ProfileSnapshot> preview = source->FetchPreview("refs/pull/7/head", {});
  EXPECT_EQ(preview.status().code(), absl::StatusCode::kResourceExhausted) << preview.status();
  EXPECT_NE(preview.status().message().find("the fetch exceeded the cap of 131072 bytes"),
            std::string::npos)
      << preview.status();
  const std::string mirror = (tmp_ / "state" / "mirror.git").string();
  EXPECT_NE(RunCommand({"git", "-C", mirror, "cat-file", "-e", head}).exit_code, 0);
  EXPECT_NE(RunCommand({"git", "-C", mirror, "rev-parse", "-q", "--verify",
                        "refs/previews/pull/7/head"})
                .exit_code,
            0);
  // Within twice the budget the same head is fetched.
  config.preview_limits.max_total_bytes = 256 * 1024;
  config.state_dir = tmp_ / "state-2";
  auto roomier = OpenSource(config);
  ASSERT_NE(roomier, nullptr);
  ASSERT_TRUE(roomier->Poll().ok());
  EXPECT_TRUE(roomier->FetchPreview("refs/pull/7/head", {}).ok());
}

TEST_F(PreviewTest, DropPreviewDeletesTheKeptRef) {
  auto source = OpenSource(Config("file://" + upstream_.bare().string()));
  ASSERT_NE(source, nullptr);
  PublishHead("refs/pull/7/head", "kind: a\n");
  ASSERT_TRUE(source->FetchPreview("refs/pull/7/head", {}).ok());
  const std::string mirror = (tmp_ / "state" / "mirror.git").string();
  auto kept = [&] {
    return RunCommand({"git", "-C", mirror, "rev-parse", "-q", "--verify",
                       "refs/previews/pull/7/head"})
               .exit_code == 0;
  };
  EXPECT_TRUE(kept());
  EXPECT_TRUE(source->DropPreview("refs/pull/7/head").ok());
  EXPECT_FALSE(kept());
  EXPECT_TRUE(source->DropPreview("refs/pull/7/head").ok());  // already gone: fine
  EXPECT_EQ(source->DropPreview("refs/heads/main").code(), absl::StatusCode::kInvalidArgument);
}

// What a pull request brought goes with its preview at the next compaction that rewrites the
// whole mirror, while a preview still kept and everything the branches reach stay.
TEST_F(PreviewTest, ADroppedPreviewsObjectsGoAtTheNextWholeCompaction) {
  auto source = OpenSource(Config("file://" + upstream_.bare().string()));
  ASSERT_NE(source, nullptr);
  ASSERT_TRUE(source->Poll().ok());
  // The second head is a child of the first (one side branch): the kept one comes first.
  const std::string kept = PublishHead("refs/pull/8/head", "kind: kept\n");
  const std::string dropped = PublishHead("refs/pull/7/head", "kind: dropped\n");
  ASSERT_TRUE(source->FetchPreview("refs/pull/7/head", {}).ok());
  ASSERT_TRUE(source->FetchPreview("refs/pull/8/head", {}).ok());
  ASSERT_TRUE(source->DropPreview("refs/pull/7/head").ok());
  const std::string mirror = (tmp_ / "state" / "mirror.git").string();
  auto present = [&](const std::string& object) {
    return RunCommand({"git", "-C", mirror, "cat-file", "-e", object}).exit_code == 0;
  };
  ASSERT_TRUE(present(dropped + ":clusters/staging.yaml"));
  // Three packs (the clone and two previews), none twice as large as the rest: all rewritten.
  ASSERT_TRUE(source->mirror()->CompactIfNeeded(0, /*whole_growth=*/1).ok());
  EXPECT_FALSE(present(dropped));
  EXPECT_FALSE(present(dropped + ":clusters/staging.yaml"));
  EXPECT_TRUE(present(kept + ":clusters/staging.yaml"));
  EXPECT_TRUE(source->Snapshot(desired_tip_).ok());
  EXPECT_EQ(ListPacks(mirror).size(), 1u);
  MustRun({"git", "-C", mirror, "fsck", "--strict", "--no-dangling"});
}

// A mirror whose largest pack is a clone's, with a dropped preview's objects outside it that
// nothing reaches, and commits fetched since.
class GrownMirrorTest : public PreviewTest {
 protected:
  void SetUp() override {
    PreviewTest::SetUp();
    source_ = OpenSource(Config("file://" + upstream_.bare().string()));
    ASSERT_NE(source_, nullptr);
    ASSERT_TRUE(source_->Poll().ok());
    dropped_ = PublishHead("refs/pull/7/head", "kind: dropped\n");
    ASSERT_TRUE(source_->FetchPreview("refs/pull/7/head", {}).ok());
    ASSERT_TRUE(source_->DropPreview("refs/pull/7/head").ok());
    CommitDesired({{"clusters/prod.yaml", "1"}}, "x");
    ASSERT_TRUE(source_->Poll().ok());
  }

  bool Present(const std::string& object) const {
    return RunCommand({"git", "-C", mirror_, "cat-file", "-e", object}).exit_code == 0;
  }
  PackFile Largest() const {
    std::vector<PackFile> packs = ListPacks(mirror_);
    return *std::max_element(packs.begin(), packs.end(), [](const PackFile& a, const PackFile& b) {
      return a.objects < b.objects;
    });
  }
  // Commits fetched until the mirror holds `growth` times its largest pack.
  void GrowTo(std::size_t growth) {
    for (int i = 2; !WholeRewriteDue(ListPacks(mirror_), 0, growth); ++i) {
      ASSERT_LT(i, 100);
      CommitDesired({{"clusters/prod.yaml", std::to_string(i)}}, "x");
      ASSERT_TRUE(source_->Poll().ok());
    }
  }

  const std::string mirror_ = (tmp_ / "state" / "mirror.git").string();
  std::unique_ptr<LibGitSource> source_;
  std::string dropped_;
};

// A compaction that would roll every pack up keeps the largest (the last whole rewrite's) and
// rolls the rest up as they are, while the mirror holds less than kWholeRewriteGrowth times its
// objects: no delta is searched, and what nothing reaches stays. Past that, the whole mirror is
// rewritten and a dropped preview's objects go.
TEST_F(GrownMirrorTest, TheLargestPackIsKeptUntilTheMirrorHasGrownPastItsWholeRewriteGrowth) {
  const PackFile clone = Largest();
  // Every pack would roll, but the mirror is not yet four times its largest pack.
  ASSERT_EQ(PacksToRollUp(ListPacks(mirror_), 0).size(), 3u);
  ASSERT_FALSE(WholeRewriteDue(ListPacks(mirror_), 0, Mirror::kWholeRewriteGrowth));
  ASSERT_TRUE(source_->mirror()->CompactIfNeeded(0).ok());
  EXPECT_EQ(ListPacks(mirror_).size(), 2u);
  EXPECT_TRUE(std::filesystem::exists(clone.pack)) << "the largest pack was rewritten";
  EXPECT_TRUE(Present(dropped_)) << "a roll-up dropped an object";
  // Grown past four times the largest pack: the next compaction rewrites the whole mirror.
  GrowTo(Mirror::kWholeRewriteGrowth);
  ASSERT_TRUE(source_->mirror()->CompactIfNeeded(0).ok());
  EXPECT_EQ(ListPacks(mirror_).size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(clone.pack));
  EXPECT_FALSE(Present(dropped_));
  EXPECT_TRUE(source_->Snapshot(desired_tip_).ok());
  MustRun({"git", "-C", mirror_, "fsck", "--strict", "--no-dangling"});
}

// While status commits come (a rollout), a compaction rewrites the whole mirror only past
// kBusyWholeRewriteGrowth: short of it, the largest pack is kept and the rest rolled up as they
// are, and what nothing reaches stays.
TEST_F(GrownMirrorTest, AtTheBusyGrowthTheLargestPackIsKeptPastTheQuietOne) {
  GrowTo(Mirror::kWholeRewriteGrowth);
  ASSERT_FALSE(WholeRewriteDue(ListPacks(mirror_), 0, Mirror::kBusyWholeRewriteGrowth));
  const PackFile clone = Largest();
  ASSERT_TRUE(source_->mirror()->CompactIfNeeded(0, Mirror::kBusyWholeRewriteGrowth).ok());
  EXPECT_EQ(ListPacks(mirror_).size(), 2u) << "the packs but the largest, rolled up";
  EXPECT_TRUE(std::filesystem::exists(clone.pack)) << "rewritten while busy";
  EXPECT_TRUE(Present(dropped_));
  GrowTo(Mirror::kBusyWholeRewriteGrowth);
  ASSERT_TRUE(source_->mirror()->CompactIfNeeded(0, Mirror::kBusyWholeRewriteGrowth).ok());
  EXPECT_EQ(ListPacks(mirror_).size(), 1u);
  EXPECT_FALSE(Present(dropped_));
  MustRun({"git", "-C", mirror_, "fsck", "--strict", "--no-dangling"});
}

// The mirror is busy from a status commit or a fetched commit until a quiet poll follows a
// quiet poll: the four-fold whole rewrite waits for the second.
TEST(WholeRewritePaceTest, BusyUntilAQuietRequestFollowsAQuietOne) {
  using Pace = Mirror::Pace;
  Mirror::WholeRewritePace pace;
  EXPECT_EQ(pace.GrowthFor(Pace::kQuiet), Mirror::kWholeRewriteGrowth) << "a mirror just opened";
  EXPECT_EQ(pace.GrowthFor(Pace::kBusy), Mirror::kBusyWholeRewriteGrowth);
  EXPECT_EQ(pace.GrowthFor(Pace::kBusy), Mirror::kBusyWholeRewriteGrowth);
  EXPECT_EQ(pace.GrowthFor(Pace::kQuiet), Mirror::kBusyWholeRewriteGrowth) << "right after one";
  EXPECT_EQ(pace.GrowthFor(Pace::kQuiet), Mirror::kWholeRewriteGrowth);
  EXPECT_EQ(pace.GrowthFor(Pace::kQuiet), Mirror::kWholeRewriteGrowth);
  EXPECT_EQ(pace.GrowthFor(Pace::kBusy), Mirror::kBusyWholeRewriteGrowth);
  EXPECT_EQ(pace.GrowthFor(Pace::kQuiet), Mirror::kBusyWholeRewriteGrowth);
  EXPECT_EQ(pace.GrowthFor(Pace::kBusy), Mirror::kBusyWholeRewriteGrowth) << "busy again";
  EXPECT_EQ(pace.GrowthFor(Pace::kQuiet), Mirror::kBusyWholeRewriteGrowth);
}

// The whole compaction writes its pack while other operations go on. A ref that comes, in the
// meantime, to reach an object nothing reached when the pack was walked (here: a commit made
// in the mirror over a dropped preview's file) keeps that object: the compaction follows the
// refs that moved before it deletes anything.
TEST_F(PreviewTest, AnObjectARefComesToReachWhileTheCompactionWritesIsKept) {
  auto source = OpenSource(Config("file://" + upstream_.bare().string()));
  ASSERT_NE(source, nullptr);
  ASSERT_TRUE(source->Poll().ok());
  const std::string dropped = PublishHead("refs/pull/7/head", "kind: dropped\n");
  ASSERT_TRUE(source->FetchPreview("refs/pull/7/head", {}).ok());
  ASSERT_TRUE(source->DropPreview("refs/pull/7/head").ok());
  const std::string mirror = (tmp_ / "state" / "mirror.git").string();
  const std::string blob =
      MustRun({"git", "-C", mirror, "rev-parse", dropped + ":clusters/staging.yaml"});
  for (const char* content : {"1", "2", "3"}) {  // small packs, so that all are rewritten
    CommitDesired({{"clusters/prod.yaml", content}}, "x");
    ASSERT_TRUE(source->Poll().ok());
  }
  const std::size_t packs_before = ListPacks(mirror).size();
  ASSERT_EQ(PacksToRollUp(ListPacks(mirror), ListLooseObjects(mirror).size()).size(),
            packs_before);
  absl::Status compacted = absl::UnknownError("not run");
  std::thread compaction;
  {
    // Held shared, the mirror cannot be taken for the deletes: the compaction waits there once
    // its pack is written.
    std::shared_lock hold(source->mirror()->lock());
    compaction = std::thread(
        [&] { compacted = source->mirror()->CompactIfNeeded(0, /*whole_growth=*/1); });
    if (!tr::test_support::WaitUntil(
            [&] { return ListPacks(mirror).size() == packs_before + 1; })) {
      hold.unlock();
      compaction.join();
      FAIL() << "no pack was written beside the " << packs_before << ": " << compacted;
    }
    RunOptions entry;
    entry.input = "100644 blob " + blob + "\tfile\n";
    const std::string tree = MustRun({"git", "-C", mirror, "mktree"}, entry);
    const std::string commit =
        MustRun({"git", "-C", mirror, "commit-tree", tree, "-m", "reaches the dropped file"});
    MustRun({"git", "-C", mirror, "update-ref", "refs/previews/pull/9/head", commit});
  }
  compaction.join();
  ASSERT_TRUE(compacted.ok()) << compacted;
  EXPECT_EQ(RunCommand({"git", "-C", mirror, "cat-file", "-e", blob}).exit_code, 0)
      << "the object the new ref reaches was deleted";
  MustRun({"git", "-C", mirror, "fsck", "--strict", "--no-dangling"});
}

// A pull request whose close was never heard of must not keep its head for ever: past
// max_kept_previews the lowest-numbered go, never the one just fetched.
TEST_F(PreviewTest, KeepsAtMostMaxKeptPreviewsDroppingTheLowestNumbers) {
  GitSourceConfig config = Config("file://" + upstream_.bare().string());
  config.max_kept_previews = 2;
  auto source = OpenSource(config);
  ASSERT_NE(source, nullptr);
  for (int number : {3, 1, 2, 5, 1}) {
    const std::string ref = "refs/pull/" + std::to_string(number) + "/head";
    PublishHead(ref, "kind: " + std::to_string(number) + "\n");
    absl::StatusOr<ProfileSnapshot> preview = source->FetchPreview(ref, {});
    ASSERT_TRUE(preview.ok()) << preview.status();
  }
  const std::string mirror = (tmp_ / "state" / "mirror.git").string();
  EXPECT_EQ(RunCommand({"git", "-C", mirror, "for-each-ref", "--format=%(refname)",
                        "refs/previews/"})
                .out,
            "refs/previews/pull/1/head\nrefs/previews/pull/5/head\n");
}

}  // namespace
}  // namespace tr::gitsource::testing
