// Proposal branches against a real Git server (git daemon on loopback): the commit holds only
// the given files on its base, an unchanged proposal is not pushed again, a newer base replaces
// the branch (force-with-lease), and a branch someone else pushed to is left alone.
#include "gitsource/proposal_branch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gitsource/git_source.h"
#include "gitsource/status_refspec.h"
#include "tests/gitsource/fixture.h"
#include "tests/support/servers.h"

namespace tr::gitsource::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kBranch[] = "talos-reconciler/update/lab";

class ProposalBranchTest : public UpstreamTest {
 protected:
  void SetUp() override {
    UpstreamTest::SetUp();
    source_ = OpenSource(Config(daemon_.Url("profiles")));
    ASSERT_NE(source_, nullptr);
    publisher_ = std::make_unique<GitProposalPublisher>(*source_, "talos-reconciler/status",
                                                        ProposalIdentity{}, Env::Default());
  }

  // The watched branch's tip, fetched into the mirror as the daemon's poll does.
  std::string Polled() {
    absl::StatusOr<RemoteHead> head = source_->Poll();
    EXPECT_TRUE(head.ok()) << head.status();
    return head.ok() ? head->commit : "";
  }

  ProposalCommit Bump(const std::string& base, const std::string& version) {
    return {.branch = kBranch,
            .base_commit = base,
            .files = {{"clusters/prod.yaml", std::string(kProdProfile) + "# " + version + "\n"}},
            .message = "Upgrade prod to Talos " + version};
  }

  GitDaemon daemon_{served_};
  std::unique_ptr<LibGitSource> source_;
  std::unique_ptr<GitProposalPublisher> publisher_;
};

TEST_F(ProposalBranchTest, PublishesTheChangeOnItsBaseOnce) {
  const std::string base = Polled();
  absl::StatusOr<ProposalPush> pushed = publisher_->Publish(Bump(base, "1.12.3"), {});
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  EXPECT_TRUE(pushed->created);
  EXPECT_EQ(upstream_.Tip(kBranch), pushed->commit);
  EXPECT_EQ(upstream_.GitBare({"rev-parse", pushed->commit + "^"}), base);
  EXPECT_EQ(upstream_.GitBare({"diff", "--name-only", base, pushed->commit}), "clusters/prod.yaml");
  EXPECT_EQ(upstream_.GitBare({"log", "-1", "--format=%cn <%ce>|%s", pushed->commit}),
            "talos-reconciler <talos-reconciler@localhost>|Upgrade prod to Talos 1.12.3");

  absl::StatusOr<ProposalPush> again = publisher_->Publish(Bump(base, "1.12.3"), {});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->commit, pushed->commit);
}

TEST_F(ProposalBranchTest, ANewerReleaseOrBaseReplacesTheBranch) {
  const std::string first_base = Polled();
  ASSERT_TRUE(publisher_->Publish(Bump(first_base, "1.12.3"), {}).ok());
  const std::string second_base = CommitDesired({{"reconciler.yaml", "# moved on\n"}}, "moved");
  EXPECT_EQ(Polled(), second_base);
  absl::StatusOr<ProposalPush> pushed = publisher_->Publish(Bump(second_base, "1.12.4"), {});
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  EXPECT_TRUE(pushed->created);
  EXPECT_EQ(upstream_.Tip(kBranch), pushed->commit);
  EXPECT_EQ(upstream_.GitBare({"rev-parse", pushed->commit + "^"}), second_base);
}

TEST_F(ProposalBranchTest, ABranchSomeoneElsePushedToIsLeftAlone) {
  const std::string base = Polled();
  ASSERT_TRUE(publisher_->Publish(Bump(base, "1.12.3"), {}).ok());
  upstream_.Git({"fetch", "origin"});
  upstream_.Git({"checkout", "-B", kBranch, std::string("origin/") + kBranch});
  const std::string theirs = upstream_.Commit({{"notes.md", "a fix\n"}}, "a fix", kBranch);
  absl::StatusOr<ProposalPush> pushed = publisher_->Publish(Bump(base, "1.12.4"), {});
  EXPECT_EQ(pushed.status().code(), absl::StatusCode::kFailedPrecondition) << pushed.status();
  EXPECT_THAT(std::string(pushed.status().message()), HasSubstr("did not write"));
  EXPECT_EQ(upstream_.Tip(kBranch), theirs);
}

// Anyone can sign a commit as the reconciler: a tip is the reconciler's only when it recorded
// that commit id as pushed, so a fix pushed under its name is kept too.
TEST_F(ProposalBranchTest, AFixPushedUnderTheReconcilersNameIsLeftAlone) {
  const std::string base = Polled();
  ASSERT_TRUE(publisher_->Publish(Bump(base, "1.12.3"), {}).ok());
  upstream_.Git({"fetch", "origin"});
  upstream_.Git({"checkout", "-B", kBranch, std::string("origin/") + kBranch});
  upstream_.Commit({{"notes.md", "a fix\n"}}, "a fix", kBranch);
  // The tests' git runs with a committer in its environment: amended as the reconciler, the way
  // anyone can, through a shell alias that sets it.
  upstream_.Git({"-c",
                 "alias.as-reconciler=!GIT_COMMITTER_NAME=talos-reconciler "
                 "GIT_COMMITTER_EMAIL=talos-reconciler@localhost git commit -q --amend --no-edit",
                 "as-reconciler"});
  upstream_.Git({"push", "-q", "-f", "origin", kBranch});
  const std::string theirs = upstream_.Git({"rev-parse", "HEAD"});
  ASSERT_EQ(upstream_.GitBare({"log", "-1", "--format=%ce", theirs}), "talos-reconciler@localhost");
  absl::StatusOr<ProposalPush> pushed = publisher_->Publish(Bump(base, "1.12.4"), {});
  EXPECT_EQ(pushed.status().code(), absl::StatusCode::kFailedPrecondition) << pushed.status();
  EXPECT_EQ(upstream_.Tip(kBranch), theirs);
}

// The record outlives the process when given a file: a restarted publisher replaces its own
// tip; one that lost the record leaves the branch alone rather than guess.
TEST_F(ProposalBranchTest, TheRecordOfPushedCommitsSurvivesARestart) {
  const std::filesystem::path record = tmp_ / "proposal-commits";
  auto with_record = std::make_unique<GitProposalPublisher>(*source_, "talos-reconciler/status",
                                                            ProposalIdentity{}, Env::Default(),
                                                            record);
  const std::string base = Polled();
  ASSERT_TRUE(with_record->Publish(Bump(base, "1.12.3"), {}).ok());
  with_record.reset();
  const std::string newer = CommitDesired({{"reconciler.yaml", "# moved on\n"}}, "moved");
  EXPECT_EQ(Polled(), newer);
  EXPECT_EQ(publisher_->Publish(Bump(newer, "1.12.4"), {}).status().code(),
            absl::StatusCode::kFailedPrecondition);  // this one never recorded it
  GitProposalPublisher restarted(*source_, "talos-reconciler/status", ProposalIdentity{},
                                 Env::Default(), record);
  absl::StatusOr<ProposalPush> pushed = restarted.Publish(Bump(newer, "1.12.4"), {});
  ASSERT_TRUE(pushed.ok()) << pushed.status();
  EXPECT_EQ(upstream_.Tip(kBranch), pushed->commit);
}

TEST_F(ProposalBranchTest, OnlyBranchesUnderTheProposalNamespaceArePushed) {
  const std::string base = Polled();
  for (const char* branch : {"main", "talos-reconciler/status", "feature/x",
                             "talos-reconciler/update/", "talos-reconciler/update/a..b"}) {
    ProposalCommit proposal = Bump(base, "1.12.3");
    proposal.branch = branch;
    EXPECT_EQ(publisher_->Publish(proposal, {}).status().code(), absl::StatusCode::kInvalidArgument)
        << branch;
  }
  EXPECT_EQ(upstream_.GitBare({"for-each-ref", "--format=%(refname)"}), "refs/heads/main");
  EXPECT_TRUE(
      ProposalPushRefspec("talos-reconciler/update/lab", "main", "talos-reconciler/status").ok());
  EXPECT_FALSE(ProposalPushRefspec("talos-reconciler/update/lab", "talos-reconciler/update",
                                   "talos-reconciler/status")
                   .ok());
  EXPECT_FALSE(CheckProposalPushRefspec("+refs/talos-reconciler/proposal-outgoing:refs/heads/main",
                                        "talos-reconciler/update/lab", "main",
                                        "talos-reconciler/status")
                   .ok());
}

}  // namespace
}  // namespace tr::gitsource::testing
