// The last line of defence, tested directly: RemoteClient::Push refuses forced or foreign
// refspecs, a commit that does not descend from the remote tip, and a tip that moved, and
// the server's branches stay where they were.
#include <git2.h>
#include <gtest/gtest.h>

#include "gitsource/mirror.h"
#include "gitsource/status_refspec.h"
#include "tests/gitsource/fixture.h"
#include "tests/support/servers.h"

namespace tr::gitsource::testing {
namespace {

constexpr char kStatus[] = "talos-reconciler/status";

class PushGuardTest : public UpstreamTest {
 protected:
  void SetUp() override {
    UpstreamTest::SetUp();
    status_tip_ = upstream_.Commit({{"status/a.yaml", "a\n"}}, "status", kStatus);
    RemoteConfig remote;
    remote.url = daemon_.Url("profiles");
    absl::StatusOr<std::shared_ptr<Mirror>> mirror =
        Mirror::Open(tmp_ / "state", remote, Env::Default());
    ASSERT_TRUE(mirror.ok()) << mirror.status();
    mirror_ = *std::move(mirror);
    absl::StatusOr<RepositoryPtr> repo = mirror_->Repository();
    ASSERT_TRUE(repo.ok()) << repo.status();
    repo_ = *std::move(repo);
    absl::StatusOr<SyncResult> sync = mirror_->SyncBranch(repo_.get(), kStatus, {});
    ASSERT_TRUE(sync.ok()) << sync.status();
    tip_ = *sync->remote_tip;
  }

  void TearDown() override {
    EXPECT_EQ(upstream_.Tip(kStatus), status_tip_) << "the status branch was moved";
    UpstreamTest::TearDown();
  }

  // A commit with no parent (so not a descendant of anything), held by the outgoing ref.
  git_oid OrphanCommit() {
    git_treebuilder* builder = nullptr;
    git_oid tree_id, commit_id;
    EXPECT_EQ(git_treebuilder_new(&builder, repo_.get(), nullptr), 0);
    EXPECT_EQ(git_treebuilder_write(&tree_id, builder), 0);
    git_treebuilder_free(builder);
    git_tree* tree = nullptr;
    git_signature* who = nullptr;
    EXPECT_EQ(git_tree_lookup(&tree, repo_.get(), &tree_id), 0);
    EXPECT_EQ(git_signature_new(&who, "x", "x@example.com", 1, 0), 0);
    EXPECT_EQ(git_commit_create(&commit_id, repo_.get(), nullptr, who, who, nullptr, "orphan", tree,
                                0, nullptr),
              0);
    git_signature_free(who);
    git_tree_free(tree);
    EXPECT_TRUE(mirror_->SetRef(repo_.get(), std::string(kStatusOutgoingRef), commit_id).ok());
    return commit_id;
  }

  PushRequest Request(const git_oid& commit) const {
    return PushRequest{kStatus, "main", *StatusPushRefspec(kStatus, "main"), tip_, commit};
  }

  GitDaemon daemon_{served_};
  std::string status_tip_;
  std::shared_ptr<Mirror> mirror_;
  RepositoryPtr repo_;
  git_oid tip_{};
};

TEST_F(PushGuardTest, RefusesACommitThatIsNotAFastForward) {
  absl::StatusOr<PushOutcome> outcome =
      mirror_->remote().Push(repo_.get(), Request(OrphanCommit()), {});
  // Refused by our check at the wire (push negotiation), before anything is sent.
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kInternal) << outcome.status();
  EXPECT_NE(outcome.status().message().find("refusing a non-fast-forward"), absl::string_view::npos)
      << outcome.status();
}

TEST_F(PushGuardTest, RefusesWhenTheRemoteMovedSinceWeFetched) {
  PushRequest request = Request(OrphanCommit());
  git_oid_fromstr(&*request.expected_remote, desired_tip_.c_str());  // not the status tip
  absl::StatusOr<PushOutcome> outcome = mirror_->remote().Push(repo_.get(), request, {});
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_FALSE(outcome->accepted);
  EXPECT_EQ(outcome->rejection, "the remote status branch moved");
}

TEST_F(PushGuardTest, RefusesForcedAndForeignRefspecsBeforeConnecting) {
  const git_oid commit = OrphanCommit();
  PushRequest forced = Request(commit);
  forced.refspec = "+" + forced.refspec;
  EXPECT_EQ(mirror_->remote().Push(repo_.get(), forced, {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  PushRequest to_main = Request(commit);
  to_main.refspec = std::string(kStatusOutgoingRef) + ":refs/heads/main";
  EXPECT_EQ(mirror_->remote().Push(repo_.get(), to_main, {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  PushRequest as_main = Request(commit);
  as_main.status_branch = "main";
  as_main.refspec = std::string(kStatusOutgoingRef) + ":refs/heads/main";
  EXPECT_EQ(mirror_->remote().Push(repo_.get(), as_main, {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tr::gitsource::testing
