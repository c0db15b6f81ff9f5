// The daemon's own life: it stops on SIGTERM whatever it is waiting for (a repository that is
// down, nodes that never answer), fails at start on configuration only a person can fix,
// reports itself stuck on /healthz, and one cluster that never answers does not slow another.
#include <sys/wait.h>

#include <csignal>
#include <fstream>

#include "fmt/format.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/support/blackhole.h"

namespace tr::e2e {
namespace {

using ::tr::test_support::Blackhole;

bool ExitedWith(int wait_status, int code) {
  return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == code;
}

// The daemon pointed at a repository nothing serves.
void StartAgainstADeadRepository(E2eWorld& world, std::vector<std::string> extra) {
  E2E_ASSERT_OK(world.StartFleet({MakeCluster("lab", 1, 0, "1.11.6")}));
  const std::string host = world.sim().address_prefix() + ".251";
  int port = 0;
  E2E_ASSERT_OK_AND_ASSIGN(port, FreePort(host));
  E2E_ASSERT_OK(world.StartDaemon([&](DaemonOptions& options) {
    options.repo_url = fmt::format("git://{}:{}/fleet.git", host, port);
    options.extra_args = extra;
  }));
}

TEST_F(E2eTest, StopsOnSigtermWhileTheRepositoryIsUnreachable) {
  ASSERT_NO_FATAL_FAILURE(StartAgainstADeadRepository(world(), {}));
  ASSERT_TRUE(world().WaitUntil(30s, [&] { return world().daemon().Get("/healthz").ok(); }))
      << world().Diagnostics();
  int status = 0;
  E2E_ASSERT_OK_AND_ASSIGN(status, world().daemon().Terminate(15s));
  EXPECT_TRUE(ExitedWith(status, 0)) << gitsource::DescribeWaitStatus(status);
}

// A peer hanging up mid-write gives EPIPE: the daemon ignores SIGPIPE (/proc/<pid>/status SigIgn).
TEST_F(E2eTest, TheDaemonIgnoresSigpipe) {
  ASSERT_NO_FATAL_FAILURE(StartAgainstADeadRepository(world(), {}));
  ASSERT_TRUE(world().WaitUntil(30s, [&] { return world().daemon().Get("/healthz").ok(); }))
      << world().Diagnostics();
  std::ifstream status(fmt::format("/proc/{}/status", world().daemon().pid()));
  std::string line, ignored;
  while (std::getline(status, line)) {
    if (line.starts_with("SigIgn:")) ignored = line.substr(7);
  }
  ASSERT_FALSE(ignored.empty());
  const unsigned long long mask = std::stoull(ignored, nullptr, 16);
  EXPECT_NE(mask & (1ull << (SIGPIPE - 1)), 0u) << "SigIgn:" << ignored;
}

TEST_F(E2eTest, HealthzReportsADaemonThatMakesNoProgress) {
  ASSERT_NO_FATAL_FAILURE(StartAgainstADeadRepository(world(), {"--unhealthy-after", "2s"}));
  ASSERT_TRUE(world().WaitUntil(30s, [&] {
    auto reply = world().daemon().Get("/healthz");
    return reply.ok() && reply->status == 503;
  })) << "/healthz never reported the daemon stuck\n"
      << world().Diagnostics();
  absl::StatusOr<HttpReply> ready = world().daemon().Get("/readyz");
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->status, 503);
}

TEST_F(E2eTest, CredentialsThatCanNeverWorkFailAtStart) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("lab", 1, 0, "1.11.6")}));
  std::ofstream(dir_ / "token") << "t0ken\n";
  const std::string host = world().sim().address_prefix() + ".251";
  struct Case {
    std::string url;
    std::vector<std::string> extra;
    std::string message;
  };
  const std::vector<Case> cases = {
      {fmt::format("http://{}:1/fleet.git", host),
       {"--git-token-file", (dir_ / "token").string()},
       "--git-token-file (set by the command line): refusing to send credentials over plain "
       "http://"},
      {fmt::format("https://{}:1/fleet.git", host),
       {"--git-token-file", (dir_ / "no-such-token").string()},
       "--git-token-file (set by the command line): cannot read"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    DaemonOptions options;
    options.repo_url = c.url;
    options.credentials_dir = world().sim().state_dir();
    options.state_dir = dir_ / "state";
    options.listen = fmt::format("{}:1", host);
    options.extra_args = c.extra;
    DaemonProcess daemon(options, dir_ / "config-error.log");
    E2E_ASSERT_OK(daemon.Start());
    ASSERT_TRUE(daemon.WaitForExit(30s).has_value()) << "still running: " << daemon.log();
    EXPECT_TRUE(ExitedWith(*daemon.exit_status(), 1))
        << gitsource::DescribeWaitStatus(*daemon.exit_status());
    EXPECT_NE(daemon.log().find(c.message), std::string::npos) << daemon.log();
    EXPECT_EQ(daemon.log().find("t0ken"), std::string::npos);
  }
}

// `count` blackholes on one loopback address and the profile of a one-node cluster whose
// control plane is there, with one endpoint per blackhole (credentials of the cluster `lab`).
struct HangingCluster {
  std::vector<std::unique_ptr<Blackhole>> holes;
  std::string profile;
  int accepted() const {
    int total = 0;
    for (const auto& hole : holes) total += hole->accepted();
    return total;
  }
};

HangingCluster MakeHangingCluster(const std::string& host, int count) {
  HangingCluster cluster;
  std::string endpoints;
  for (int i = 0; i < count; ++i) {
    cluster.holes.push_back(std::make_unique<Blackhole>(host));
    EXPECT_TRUE(cluster.holes.back()->ok());
    endpoints += fmt::format("{}{}:{}", i == 0 ? "" : ", ", host, cluster.holes.back()->port());
  }
  cluster.profile = fmt::format(
      "apiVersion: talos-reconciler.dev/v1alpha1\nkind: ClusterProfile\n"
      "metadata:\n  name: blackhole\nspec:\n  endpoints: [{}]\n  credentials: lab\n"
      "  talos:\n    version: 1.11.6\n    image: {}\n  kubernetes:\n    version: 1.34.1\n"
      "  nodes:\n    - {{name: hole-cp, address: {}, role: controlplane}}\n",
      endpoints, kInstallerImage, host);
  return cluster;
}

// SIGTERM while calls to a cluster hang (each of its 40 endpoints accepts and never answers, so
// one kubeconfig fetch alone would take 40 connect attempts): the calls are cancelled and the
// daemon exits 0 well within --shutdown-timeout.
TEST_F(E2eTest, SigtermCancelsHangingCallsAndExitsInTime) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("lab", 1, 0, "1.11.6")}));
  HangingCluster hanging = MakeHangingCluster(world().sim().address_prefix() + ".241", 40);
  world().PushProfiles({{"lab", AtTalos("1.11.6")}}, "lab beside a blackhole",
                       {{ProfilePath("blackhole"), hanging.profile}});
  E2E_ASSERT_OK(world().StartDaemon());
  ASSERT_TRUE(world().WaitUntil(30s, [&] { return hanging.accepted() > 0; }))
      << "the daemon never called the hanging cluster\n"
      << world().Diagnostics();
  int status = 0;
  E2E_ASSERT_OK_AND_ASSIGN(status, world().daemon().Terminate(15s));
  EXPECT_TRUE(ExitedWith(status, 0)) << gitsource::DescribeWaitStatus(status);
}

// A cluster whose API accepts connections and never answers, beside one that works: the one
// that works upgrades while the other is still hanging (its first kubeconfig fetch alone may
// take 9 endpoints x 10 s connect timeout = 90 s), the other is reported unreachable, /healthz
// answers throughout, and SIGTERM ends the daemon at once although calls are hanging.
//
// It waits out the Talos client's 30 s read deadline: registered in the plain pass only, as the
// test time budget asks (SIGTERM while calls hang is checked in both passes above).
#ifndef TR_ASAN
TEST_F(E2eTest, AClusterThatNeverAnswersDoesNotSlowAnother) {
  E2E_ASSERT_OK(world().StartFleet({MakeCluster("lab", 1, 1, "1.11.6")}));
  HangingCluster hanging = MakeHangingCluster(world().sim().address_prefix() + ".241", 9);
  const std::string commit =
      world().PushProfiles({{"lab", AtTalos("1.12.0")}}, "lab: Talos 1.12.0 beside a blackhole",
                           {{ProfilePath("blackhole"), hanging.profile}});
  E2E_ASSERT_OK(world().StartDaemon());

  int unhealthy = 0;
  auto healthy = [&] {
    absl::StatusOr<HttpReply> reply = world().daemon().Get("/healthz");
    if (!reply.ok() || reply->status != 200) ++unhealthy;
  };
  E2E_ASSERT_OK(world()
                    .WaitForStatus(
                        "lab",
                        [&](const core::ClusterStatus& s) {
                          healthy();
                          return s.phase == core::ClusterPhase::kReady &&
                                 s.talos.current == "1.12.0" && s.desired_commit_applied == commit;
                        },
                        60s)
                    .status());
  E2E_ASSERT_OK(world()
                    .WaitForStatus(
                        "blackhole",
                        [&](const core::ClusterStatus& s) {
                          healthy();
                          return s.message.find("unreachable") != std::string::npos;
                        },
                        90s)
                    .status());
  EXPECT_EQ(unhealthy, 0);
  int status = 0;
  E2E_ASSERT_OK_AND_ASSIGN(status, world().daemon().Terminate(15s));
  EXPECT_TRUE(ExitedWith(status, 0)) << gitsource::DescribeWaitStatus(status);
}
#endif  // TR_ASAN

}  // namespace
}  // namespace tr::e2e
