// SSHSIG verification against signatures made by the real ssh-keygen, and the
// allowed-signers file format.
#include "gitsource/sshsig.h"

#include <gtest/gtest.h>

#include "base/env.h"
#include "fmt/format.h"
#include "tests/support/process.h"

namespace tr::gitsource::testing {
namespace {

using std::chrono::system_clock;

class SshSigTest : public ::testing::Test {
 protected:
  // Makes a key of `type` ("ed25519", "rsa", "ecdsa") named `name`; returns its public line.
  std::string MakeKey(const std::string& name, const std::string& type) {
    MustRun({"ssh-keygen", "-q", "-t", type, "-N", "", "-C", name, "-f", (tmp_ / name).string()});
    std::string pub = ReadFile(tmp_ / (name + ".pub"));
    return pub.substr(0, pub.rfind(' '));
  }

  std::string Sign(const std::string& key, const std::string& message,
                   const std::string& ns = "git") {
    WriteFile(tmp_ / "message", message);
    std::filesystem::remove(tmp_ / "message.sig");
    MustRun({"ssh-keygen", "-q", "-Y", "sign", "-n", ns, "-f", (tmp_ / key).string(),
             (tmp_ / "message").string()});
    return ReadFile(tmp_ / "message.sig");
  }

  TempDir tmp_;
};

TEST_F(SshSigTest, AcceptsEd25519RsaAndEcdsaKeys) {
  for (const std::string type : {"ed25519", "rsa", "ecdsa"}) {
    SCOPED_TRACE(type);
    const std::string pub = MakeKey(type, type);
    const std::string signature = Sign(type, "tree 1234\n\nmessage\n");
    absl::StatusOr<SignatureVerdict> verdict =
        VerifyGitSignature(signature, "tree 1234\n\nmessage\n",
                           fmt::format("dev@example.com {}\n", pub), Env::Default().Now());
    ASSERT_TRUE(verdict.ok()) << verdict.status();
    EXPECT_EQ(verdict->principals, "dev@example.com");
    const std::string fingerprint =
        MustRun({"ssh-keygen", "-l", "-E", "sha256", "-f", (tmp_ / (type + ".pub")).string()});
    EXPECT_NE(fingerprint.find(verdict->fingerprint), std::string::npos) << fingerprint;
  }
}

TEST_F(SshSigTest, RejectsAnAlteredMessage) {
  const std::string pub = MakeKey("alice", "ed25519");
  const std::string signature = Sign("alice", "payload");
  absl::StatusOr<SignatureVerdict> verdict =
      VerifyGitSignature(signature, "payload, altered", "alice " + pub + "\n", Env::Default().Now());
  EXPECT_EQ(verdict.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(verdict.status().message().find("not valid"), absl::string_view::npos);
}

TEST_F(SshSigTest, RejectsAnUnknownKey) {
  MakeKey("alice", "ed25519");
  const std::string bob = MakeKey("bob", "ed25519");
  absl::StatusOr<SignatureVerdict> verdict = VerifyGitSignature(
      Sign("alice", "payload"), "payload", "bob " + bob + "\n", Env::Default().Now());
  EXPECT_EQ(verdict.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(verdict.status().message().find("not in the allowed signers"), absl::string_view::npos);
}

TEST_F(SshSigTest, RejectsAnotherNamespace) {
  const std::string pub = MakeKey("alice", "ed25519");
  absl::StatusOr<SignatureVerdict> verdict = VerifyGitSignature(
      Sign("alice", "payload", "file"), "payload", "alice " + pub + "\n", Env::Default().Now());
  EXPECT_EQ(verdict.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(SshSigTest, HonoursNamespacesAndValidityOptions) {
  const std::string pub = MakeKey("alice", "ed25519");
  const std::string signature = Sign("alice", "payload");
  const auto when = system_clock::from_time_t(1'700'000'000);  // 2023-11-14
  const auto verify = [&](const std::string& options) {
    return VerifyGitSignature(signature, "payload", "alice " + options + " " + pub + "\n", when)
        .status()
        .code();
  };
  EXPECT_EQ(verify("namespaces=\"git,file\""), absl::StatusCode::kOk);
  EXPECT_EQ(verify("namespaces=\"file\""), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(verify("valid-after=\"20230101Z\""), absl::StatusCode::kOk);
  EXPECT_EQ(verify("valid-after=\"20240101Z\""), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(verify("valid-before=\"20231101\",namespaces=\"git\""),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(verify("cert-authority"), absl::StatusCode::kFailedPrecondition);
}

// Found by sshsig_fuzz: the year 9818 (with month 15) overflowed the clock on conversion.
// A date outside 1970-2200 or a field out of its range makes the line invalid.
TEST_F(SshSigTest, RefusesValidityDatesOutOfRange) {
  const std::string pub = MakeKey("alice", "ed25519");
  for (const char* date : {"98181519", "19691231Z", "22010101Z", "20231301Z", "20230132Z",
                           "202301012460Z", "20230101000061Z"}) {
    SCOPED_TRACE(date);
    EXPECT_EQ(ParseAllowedSigners(fmt::format("alice valid-after=\"{}\" {}\n", date, pub))
                  .status()
                  .code(),
              absl::StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(ParseAllowedSigners(fmt::format("alice valid-after=\"22001231235960Z\" {}\n", pub))
                  .ok());
}

TEST_F(SshSigTest, ParsesAllowedSignersFiles) {
  const std::string a = MakeKey("a", "ed25519");
  const std::string b = MakeKey("b", "ecdsa");
  absl::StatusOr<std::vector<AllowedSigner>> signers = ParseAllowedSigners(
      fmt::format("# comment\n\n  alice@example.com,*@ops.example.com {} a comment\n"
                  "\"bob smith\" namespaces=\"git\",valid-before=\"20300101120000Z\" {}\r\n",
                  a, b));
  ASSERT_TRUE(signers.ok()) << signers.status();
  ASSERT_EQ(signers->size(), 2u);
  EXPECT_EQ((*signers)[0].principals, "alice@example.com,*@ops.example.com");
  EXPECT_TRUE((*signers)[0].namespaces.empty());
  EXPECT_EQ((*signers)[1].principals, "bob smith");
  EXPECT_EQ((*signers)[1].namespaces, std::vector<std::string>{"git"});
  EXPECT_TRUE((*signers)[1].valid_before.has_value());
  EXPECT_EQ(ParseAllowedSigners("alice ssh-ed25519 not-base64!\n").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseAllowedSigners("alice bogus-option " + a + "\n").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ParseAllowedSigners("alice ssh-rsa " + a.substr(a.find(' ') + 1) + "\n").status().code(),
      absl::StatusCode::kInvalidArgument);  // the type does not match the key
}

TEST_F(SshSigTest, MalformedSignaturesAreRefused) {
  const std::string pub = MakeKey("alice", "ed25519");
  std::string signature = Sign("alice", "payload");
  signature[signature.find('\n') + 10] ^= 1;
  EXPECT_EQ(
      VerifyGitSignature(signature, "payload", "alice " + pub, Env::Default().Now()).status().code(),
      absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ParseSshSignature("-----BEGIN PGP SIGNATURE-----\n").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tr::gitsource::testing
