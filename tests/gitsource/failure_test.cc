// What goes wrong on the network and how it is reported: servers that accept and then
// hang (the deadline fires, on every transport), cancellation, wrong or missing
// credentials, unknown and changed ssh host keys, the fetch cap, a refused connection.
// Secrets never appear in any message.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "base/env.h"
#include "fmt/format.h"
#include "gitsource/git_source.h"
#include "tests/gitsource/fixture.h"
#include "tests/support/servers.h"

namespace tr::gitsource::testing {
namespace {

using std::chrono::milliseconds;

constexpr char kToken[] = "tok-5ecret-value-do-not-print";

class FailureTest : public UpstreamTest {
 protected:
  // Polls with a short deadline; checks the code and that it came at the deadline, not at
  // some timeout of the server's or the kernel's.
  void ExpectDeadline(GitSourceConfig config, HangingServer& server,
                      milliseconds deadline = milliseconds(300)) {
    config.remote.limits.operation_timeout = deadline;
    auto source = OpenSource(config);
    ASSERT_NE(source, nullptr);
    const auto start = Env::Default().Now();
    absl::StatusOr<RemoteHead> head = source->Poll();
    const auto elapsed = Env::Default().Now() - start;
    EXPECT_EQ(head.status().code(), absl::StatusCode::kDeadlineExceeded) << head.status();
    EXPECT_LT(elapsed, std::chrono::seconds(15));
    EXPECT_TRUE(server.WaitForConnections(1, milliseconds(0))) << "the server was never reached";
  }
};

TEST_F(FailureTest, HangingGitDaemonHitsTheDeadline) {
  HangingServer hang;
  ExpectDeadline(Config(fmt::format("git://127.0.0.1:{}/profiles.git", hang.port())), hang);
}

TEST_F(FailureTest, HangingHttpServerHitsTheDeadline) {
  HangingServer hang;
  ExpectDeadline(Config(fmt::format("http://127.0.0.1:{}/profiles.git", hang.port())), hang);
}

TEST_F(FailureTest, HangingHttpsServerHitsTheDeadlineDuringTheHandshake) {
  HangingServer hang;
  ExpectDeadline(Config(fmt::format("https://127.0.0.1:{}/profiles.git", hang.port())), hang);
}

TEST_F(FailureTest, HangingSshServerHitsTheDeadline) {
  HangingServer hang;
  GitSourceConfig config =
      Config(fmt::format("ssh://git@127.0.0.1:{}/srv/profiles.git", hang.port()));
  WriteFile(tmp_ / "known_hosts", "");
  config.remote.auth.known_hosts_file = tmp_ / "known_hosts";
  // Longer, so that starting the ssh client on a busy machine still leaves it time to
  // connect before the deadline.
  ExpectDeadline(config, hang, milliseconds(1500));
}

TEST_F(FailureTest, StopTokenCancelsAHangingPoll) {
  HangingServer hang;
  GitSourceConfig config = Config(fmt::format("git://127.0.0.1:{}/profiles.git", hang.port()));
  config.remote.limits.operation_timeout = std::chrono::minutes(10);
  auto source = OpenSource(config);
  ASSERT_NE(source, nullptr);
  std::stop_source stop;
  std::thread canceller([&] {
    ASSERT_TRUE(hang.WaitForConnections(1, std::chrono::seconds(30)));
    stop.request_stop();
  });
  absl::StatusOr<RemoteHead> head = source->Poll(stop.get_token());
  canceller.join();
  EXPECT_EQ(head.status().code(), absl::StatusCode::kCancelled) << head.status();
}

TEST_F(FailureTest, ConnectionRefusedIsUnavailable) {
  // A port that is bound but not listening refuses connections, and stays ours meanwhile.
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  auto source =
      OpenSource(Config(fmt::format("git://127.0.0.1:{}/profiles.git", ntohs(address.sin_port))));
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->Poll().status().code(), absl::StatusCode::kUnavailable);
  close(fd);
}

TEST_F(FailureTest, WrongHttpCredentialsAreUnauthenticatedAndNotEchoed) {
  SmartHttpServer http(served_, tmp_ / "http", {false, "git", "the-right-password"});
  GitSourceConfig config = Config(http.Url("profiles"));
  WriteFile(tmp_ / "token", std::string(kToken) + "\n");
  config.remote.auth.token_file = tmp_ / "token";
  config.remote.auth.allow_insecure_http = true;
  auto source = OpenSource(config);
  ASSERT_NE(source, nullptr);
  absl::StatusOr<RemoteHead> head = source->Poll();
  EXPECT_EQ(head.status().code(), absl::StatusCode::kUnauthenticated) << head.status();
  EXPECT_EQ(head.status().ToString().find(kToken), std::string::npos) << head.status();
  EXPECT_EQ(head.status().ToString().find("the-right-password"), std::string::npos);
}

TEST_F(FailureTest, RightHttpCredentialsWork) {
  SmartHttpServer http(served_, tmp_ / "http", {false, "git", kToken});
  GitSourceConfig config = Config(http.Url("profiles"));
  WriteFile(tmp_ / "token", kToken);
  config.remote.auth.token_file = tmp_ / "token";
  config.remote.auth.allow_insecure_http = true;
  auto source = OpenSource(config);
  ASSERT_NE(source, nullptr);
  absl::StatusOr<RemoteHead> head = source->Poll();
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->commit, desired_tip_);
}

TEST_F(FailureTest, BasicAuthWithUsernameAndPasswordFile) {
  SmartHttpServer http(served_, tmp_ / "http", {false, "deploy-bot", kToken});
  GitSourceConfig config = Config(http.Url("profiles"));
  WriteFile(tmp_ / "password", kToken);
  config.remote.auth.username = "deploy-bot";
  config.remote.auth.password_file = tmp_ / "password";
  config.remote.auth.allow_insecure_http = true;
  auto source = OpenSource(config);
  ASSERT_NE(source, nullptr);
  absl::StatusOr<RemoteHead> head = source->Poll();
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->commit, desired_tip_);
  config.remote.auth.username = "someone-else";
  config.state_dir = tmp_ / "state-wrong-user";
  EXPECT_EQ(OpenSource(config)->Poll().status().code(), absl::StatusCode::kUnauthenticated);
}

TEST_F(FailureTest, CredentialsAreNotSentOverPlainHttpUnlessAllowed) {
  SmartHttpServer http(served_, tmp_ / "http", {false, "git", kToken});
  GitSourceConfig config = Config(http.Url("profiles"));
  WriteFile(tmp_ / "token", kToken);
  config.remote.auth.token_file = tmp_ / "token";
  auto source = OpenSource(config);
  ASSERT_NE(source, nullptr);
  absl::StatusOr<RemoteHead> head = source->Poll();
  EXPECT_EQ(head.status().code(), absl::StatusCode::kUnauthenticated) << head.status();
  EXPECT_NE(head.status().message().find("plain http"), absl::string_view::npos);
  EXPECT_EQ(http.CountRequests("GET"), 1);  // the anonymous attempt only
}

TEST_F(FailureTest, MissingCredentialsAreUnauthenticated) {
  SmartHttpServer http(served_, tmp_ / "http", {false, "git", kToken});
  auto source = OpenSource(Config(http.Url("profiles")));
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->Poll().status().code(), absl::StatusCode::kUnauthenticated);
}

TEST_F(FailureTest, PasswordInUrlIsRefusedWithoutEchoingIt) {
  absl::StatusOr<std::unique_ptr<LibGitSource>> source = LibGitSource::Open(
      Config(fmt::format("https://git:{}@example.com/x.git", kToken)), Env::Default());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(source.status().ToString().find(kToken), std::string::npos);
}

class SshFailureTest : public FailureTest {
 protected:
  GitSourceConfig SshConfig(const std::string& known_hosts) {
    GitSourceConfig config = Config(sshd_.Url(upstream_.bare()));
    WriteFile(tmp_ / "known_hosts", known_hosts);
    config.remote.auth.known_hosts_file = tmp_ / "known_hosts";
    config.remote.auth.ssh_key_file = sshd_.client_key();
    return config;
  }

  SshServer sshd_{tmp_ / "sshd"};
};

TEST_F(SshFailureTest, UnknownHostKeyIsRefused) {
  auto source = OpenSource(SshConfig(""));
  ASSERT_NE(source, nullptr);
  absl::StatusOr<RemoteHead> head = source->Poll();
  EXPECT_EQ(head.status().code(), absl::StatusCode::kPermissionDenied) << head.status();
  EXPECT_EQ(ReadFile(tmp_ / "known_hosts"), "") << "nothing may be learned on first use";
}

TEST_F(SshFailureTest, ChangedHostKeyIsRefused) {
  MustRun({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", (tmp_ / "other").string()});
  std::string other = ReadFile(tmp_ / "other.pub");
  other = other.substr(0, other.rfind(' '));
  std::string line = sshd_.KnownHostsLine();
  line = line.substr(0, line.find(' ') + 1) + other + "\n";
  auto source = OpenSource(SshConfig(line));
  ASSERT_NE(source, nullptr);
  absl::StatusOr<RemoteHead> head = source->Poll();
  EXPECT_EQ(head.status().code(), absl::StatusCode::kPermissionDenied) << head.status();
}

TEST_F(SshFailureTest, UnauthorizedKeyIsUnauthenticated) {
  GitSourceConfig config = SshConfig(sshd_.KnownHostsLine());
  MustRun({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", (tmp_ / "stranger").string()});
  config.remote.auth.ssh_key_file = tmp_ / "stranger";
  auto source = OpenSource(config);
  ASSERT_NE(source, nullptr);
  absl::StatusOr<RemoteHead> head = source->Poll();
  EXPECT_EQ(head.status().code(), absl::StatusCode::kUnauthenticated) << head.status();
  const std::string key = ReadFile(tmp_ / "stranger");
  EXPECT_EQ(head.status().ToString().find(key.substr(40, 40)), std::string::npos);
}

TEST_F(SshFailureTest, SshWithoutKnownHostsIsRejectedAtConfiguration) {
  GitSourceConfig config = SshConfig("");
  config.remote.auth.known_hosts_file.clear();
  EXPECT_EQ(LibGitSource::Open(config, Env::Default()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(FailureTest, FetchLargerThanTheCapIsResourceExhausted) {
  const std::string noise = IncompressibleBytes(256 * 1024, 12345);
  CommitDesired({{"docs/noise.bin", noise}}, "noise");
  GitDaemon daemon(served_);
  GitSourceConfig config = Config(daemon.Url("profiles"));
  config.remote.limits.max_fetch_bytes = 64 * 1024;
  auto source = OpenSource(config);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->Poll().status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace tr::gitsource::testing
