// The Git settings the manual names are flags of the real binary, for `run` and `status` alike:
// a self-signed HTTPS server is trusted through --git-ca-file (and refused without it), and
// --git-allowed-signers makes the daemon act only on commits signed by an allowed key.
#include <sys/wait.h>

#include "core/status_yaml.h"
#include "core/timestamp.h"
#include "fmt/format.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/support/process.h"
#include "tests/support/repos.h"
#include "tests/support/servers.h"

namespace tr::e2e {
namespace {

using gitsource::testing::MustRun;
using gitsource::testing::ProcessResult;
using gitsource::testing::ReadFile;
using gitsource::testing::RunCommand;
using gitsource::testing::UpstreamRepo;
using gitsource::testing::WriteFile;

const std::string kBinary = std::string(TR_E2E_BINARY_DIR) + "/reconciler/talos-reconciler";

class GitSettingsTest : public E2eTest {
 protected:
  // A daemon of no clusters on `url`; ready once it published a snapshot of the branch.
  DaemonProcess& StartDaemon(const std::string& url, std::vector<std::string> extra) {
    std::filesystem::create_directories(dir_ / "creds");
    DaemonOptions options;
    options.repo_url = url;
    options.credentials_dir = dir_ / "creds";
    options.state_dir = dir_ / fmt::format("state-{}", daemons_.size());
    options.listen = fmt::format("127.0.0.1:{}", *FreePort("127.0.0.1"));
    options.extra_args = std::move(extra);
    daemons_.push_back(std::make_unique<DaemonProcess>(
        options, dir_ / fmt::format("daemon-{}.log", daemons_.size())));
    EXPECT_TRUE(daemons_.back()->Start().ok());
    return *daemons_.back();
  }

  bool Ready(DaemonProcess& daemon) {
    absl::StatusOr<HttpReply> reply = daemon.Get("/readyz");
    return reply.ok() && reply->status == 200;
  }

  bool Logged(DaemonProcess& daemon, const std::string& text) {
    return daemon.log().find(text) != std::string::npos;
  }

  ProcessResult Status(const std::string& url, std::vector<std::string> extra) {
    std::vector<std::string> argv = {
        kBinary, "status",      "--repo",
        url,     "--state-dir", (dir_ / fmt::format("status-{}", ++status_runs_)).string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv);
  }

  std::vector<std::unique_ptr<DaemonProcess>> daemons_;
  int status_runs_ = 0;
};

TEST_F(GitSettingsTest, HttpsServerWithItsOwnCaIsTrustedThroughGitCaFile) {
  UpstreamRepo upstream(dir_ / "srv", "fleet");
  upstream.Commit({{"README.md", "fleet\n"}}, "init");
  core::ClusterStatus lab;
  lab.cluster = "lab";
  lab.phase = core::ClusterPhase::kReady;
  lab.updated = *core::ParseTimestamp("2026-11-23T10:00:00Z");
  upstream.Commit({{core::ClusterStatusPath("lab"), core::RenderStatusYaml(lab)}}, "status",
                  "talos-reconciler/status");
  gitsource::testing::SmartHttpServer https(dir_ / "srv", dir_ / "tls", {true, "", ""});
  const std::string url = https.Url("fleet");
  const std::string ca = https.certificate().string();

  // Without the CA the certificate is refused, a failure only a person can fix: exit 1.
  DaemonProcess& untrusting = StartDaemon(url, {});
  ASSERT_TRUE(untrusting.WaitForExit(30s).has_value()) << untrusting.log();
  EXPECT_TRUE(WIFEXITED(*untrusting.exit_status()) && WEXITSTATUS(*untrusting.exit_status()) == 1)
      << untrusting.log();
  EXPECT_TRUE(Logged(untrusting, "certificate")) << untrusting.log();

  DaemonProcess& trusting = StartDaemon(url, {"--git-ca-file", ca});
  ASSERT_TRUE(world().WaitUntil(30s, [&] { return Ready(trusting); })) << trusting.log();
  EXPECT_TRUE(trusting.Terminate(15s).ok());

  const ProcessResult refused = Status(url, {});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  const ProcessResult read = Status(url, {"--git-ca-file", ca});
  EXPECT_EQ(read.exit_code, 0) << read.err;
  EXPECT_NE(read.out.find("lab"), std::string::npos) << read.out;
}

TEST_F(GitSettingsTest, AllowedSignersMakeTheDaemonActOnlyOnSignedCommits) {
  UpstreamRepo upstream(dir_ / "srv", "fleet");
  MustRun({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f",
           (dir_ / "alice").string()});
  const std::string pub = ReadFile(dir_ / "alice.pub");
  WriteFile(dir_ / "allowed_signers", "author@example.com " + pub.substr(0, pub.rfind(' ')) + "\n");
  const std::string unsigned_commit = upstream.Commit({{"README.md", "unsigned\n"}}, "unsigned");
  const std::string url = "file://" + upstream.bare().string();

  DaemonProcess& daemon =
      StartDaemon(url, {"--git-allowed-signers", (dir_ / "allowed_signers").string()});
  ASSERT_TRUE(world().WaitUntil(30s, [&] {
    return Logged(daemon, "step=snapshot commit=" + unsigned_commit + " error=");
  })) << daemon.log();
  EXPECT_FALSE(Ready(daemon));

  upstream.Git({"config", "gpg.format", "ssh"});
  upstream.Git({"config", "user.signingkey", (dir_ / "alice").string()});
  const std::string signed_commit =
      upstream.Commit({{"README.md", "signed\n"}}, "signed", "main", {"-S"});
  ASSERT_TRUE(world().WaitUntil(30s, [&] { return Ready(daemon); })) << daemon.log();
  EXPECT_TRUE(Logged(daemon, "step=snapshot commit=" + signed_commit.substr(0, 12)))
      << daemon.log();
  EXPECT_TRUE(daemon.Terminate(15s).ok());
}

}  // namespace
}  // namespace tr::e2e
