// Commit signature verification end to end: commits signed by the real git with
// gpg.format=ssh, fetched through the mirror, checked before a snapshot is returned, and
// the verdict compared with `git verify-commit`.
#include <gtest/gtest.h>

#include "fmt/format.h"
#include "gitsource/git_source.h"
#include "tests/gitsource/fixture.h"

namespace tr::gitsource::testing {
namespace {

class SignatureTest : public UpstreamTest {
 protected:
  void SetUp() override {
    UpstreamTest::SetUp();
    alice_ = MakeKey("alice");
    MakeKey("mallory");
    WriteFile(tmp_ / "allowed_signers", "alice@example.com " + alice_ + "\n");
    upstream_.Git({"config", "gpg.format", "ssh"});
    upstream_.Git({"config", "gpg.ssh.allowedSignersFile", (tmp_ / "allowed_signers").string()});
  }

  std::string MakeKey(const std::string& name) {
    MustRun(
        {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", (tmp_ / name).string()});
    std::string pub = ReadFile(tmp_ / (name + ".pub"));
    return pub.substr(0, pub.rfind(' '));
  }

  std::string CommitSignedBy(const std::string& key, const std::string& message) {
    upstream_.Git({"config", "user.signingkey", (tmp_ / key).string()});
    upstream_.Git({"config", "commit.gpgSign", "true"});
    const std::string commit = CommitDesired({{"clusters/prod.yaml", message + "\n"}}, message);
    upstream_.Git({"config", "--unset", "commit.gpgSign"});
    return commit;
  }

  // The snapshot's verdict, checked against git's own.
  absl::Status Verify(const std::string& commit) {
    GitSourceConfig config = Config("file://" + upstream_.bare().string());
    config.verify_signatures = SignatureVerification{tmp_ / "allowed_signers"};
    auto source = OpenSource(config);
    absl::StatusOr<RemoteHead> head = source->Poll();
    EXPECT_TRUE(head.ok()) << head.status();
    absl::StatusOr<ProfileSnapshot> snapshot = source->Snapshot(commit);
    const bool git_accepts =
        RunCommand({"git", "-C", upstream_.work().string(), "verify-commit", commit}).exit_code ==
        0;
    EXPECT_EQ(snapshot.ok(), git_accepts) << snapshot.status();
    if (snapshot.ok()) signer_ = snapshot->origin.signer;
    return snapshot.status();
  }

  std::string alice_;
  std::string signer_;
};

TEST_F(SignatureTest, CommitSignedByAnAllowedSignerIsAccepted) {
  const std::string commit = CommitSignedBy("alice", "signed");
  ASSERT_TRUE(Verify(commit).ok());
  EXPECT_EQ(signer_.rfind("alice@example.com (SHA256:", 0), 0u) << signer_;
}

TEST_F(SignatureTest, UnsignedCommitIsRefused) {
  const std::string commit = CommitDesired({{"clusters/prod.yaml", "unsigned\n"}}, "unsigned");
  const absl::Status status = Verify(commit);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("is not signed"), absl::string_view::npos) << status;
}

TEST_F(SignatureTest, CommitSignedByAnUnknownKeyIsRefused) {
  const std::string commit = CommitSignedBy("mallory", "sneaky");
  const absl::Status status = Verify(commit);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("not in the allowed signers"), absl::string_view::npos) << status;
}

TEST_F(SignatureTest, WronglySignedCommitIsRefused) {
  // Sign a commit, then change its content and keep the signature.
  upstream_.Git({"config", "user.signingkey", (tmp_ / "alice").string()});
  WriteFile(upstream_.work() / "clusters/prod.yaml", "honest\n");
  upstream_.Git({"commit", "--quiet", "-a", "-S", "-m", "honest change"});
  std::string object = upstream_.Git({"cat-file", "commit", "HEAD"}) + "\n";
  object.replace(object.find("honest change"), 13, "forged change");
  RunOptions input;
  input.input = object;
  const std::string forged = MustRun(
      {"git", "-C", upstream_.work().string(), "hash-object", "-t", "commit", "-w", "--stdin"},
      input);
  upstream_.Git({"update-ref", "refs/heads/main", forged});
  upstream_.Git({"push", "--quiet", "origin", "main"});
  desired_tip_ = forged;
  const absl::Status status = Verify(forged);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("not valid"), absl::string_view::npos) << status;
}

TEST_F(SignatureTest, OpenPgpSignedCommitIsRefusedClearly) {
  std::string object = upstream_.Git({"cat-file", "commit", "HEAD"}) + "\n";
  const std::size_t body = object.find("\n\n");
  object.insert(body + 1,
                "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n "
                "-----END PGP SIGNATURE-----\n");
  object.replace(object.rfind("initial"), 7, "pgp-signed");
  RunOptions input;
  input.input = object;
  const std::string pgp = MustRun(
      {"git", "-C", upstream_.work().string(), "hash-object", "-t", "commit", "-w", "--stdin"},
      input);
  upstream_.Git({"update-ref", "refs/heads/main", pgp});
  upstream_.Git({"push", "--quiet", "--force", "origin", "main"});
  desired_tip_ = pgp;
  GitSourceConfig config = Config("file://" + upstream_.bare().string());
  config.verify_signatures = SignatureVerification{tmp_ / "allowed_signers"};
  auto source = OpenSource(config);
  ASSERT_TRUE(source->Poll().ok());
  const absl::Status status = source->Snapshot(pgp).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("OpenPGP"), absl::string_view::npos) << status;
}

TEST_F(SignatureTest, MissingAllowedSignersFileIsAFailedPrecondition) {
  const std::string commit = CommitSignedBy("alice", "signed");
  GitSourceConfig config = Config("file://" + upstream_.bare().string());
  config.verify_signatures = SignatureVerification{tmp_ / "no-such-file"};
  auto source = OpenSource(config);
  ASSERT_TRUE(source->Poll().ok());
  EXPECT_EQ(source->Snapshot(commit).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tr::gitsource::testing
