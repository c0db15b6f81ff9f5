#include "reconciler/app/daemon/daemon_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>

#include "tests/support/run_flags.h"

namespace tr::reconciler {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class DaemonConfigTest : public test_support::RunFlagsTest {
 protected:
  void TearDown() override {
    RunFlagsTest::TearDown();
    for (const char* name : {"WORKERS", "POLL_INTERVAL", "BRANCH", "LISTEN"}) {
      ::unsetenv((std::string("TALOS_RECONCILER_") + name).c_str());
    }
  }
};

TEST_F(DaemonConfigTest, FlagsBeatEnvironmentWhichBeatsTheFile) {
  std::ofstream(dir_ / "config.ini") << "# defaults\nworkers = 7\npoll-interval = 10s\nbranch = "
                                        "release\nlisten = \"0.0.0.0:9090\"\n";
  ::setenv("TALOS_RECONCILER_WORKERS", "3", 1);
  DaemonConfig config;
  std::vector<std::string> args = Required();
  args.insert(args.end(), {"--config", (dir_ / "config.ini").string(), "--branch", "prod"});
  ASSERT_EQ(Parse(args, config), "");
  EXPECT_EQ(config.workers, 3);                               // environment over file
  EXPECT_EQ(config.poll_interval, std::chrono::seconds(10));  // file
  EXPECT_EQ(config.git.branch, "prod");                       // flag over file
  EXPECT_EQ(config.listen, "0.0.0.0:9090");
  ASSERT_TRUE(FinishDaemonConfig(config).ok());
  EXPECT_TRUE(fs::is_directory(dir_ / "state"));
  EXPECT_EQ(config.git.state_dir, dir_ / "state");
}

TEST_F(DaemonConfigTest, ConfigFileErrorsNameTheLine) {
  std::ofstream(dir_ / "bad.ini") << "workers = 2\nnot a setting\n";
  DaemonConfig config;
  std::vector<std::string> args = Required();
  args.insert(args.end(), {"--config", (dir_ / "bad.ini").string()});
  EXPECT_THAT(Parse(args, config), HasSubstr("bad.ini:2:"));
  std::ofstream(dir_ / "unknown.ini") << "colour = blue\n";
  args.back() = (dir_ / "unknown.ini").string();
  EXPECT_THAT(Parse(args, config), HasSubstr("unknown.ini:1: unknown setting \"colour\""));
  std::ofstream(dir_ / "typo.ini") << "\npoll-intervall = 10s\n";
  args.back() = (dir_ / "typo.ini").string();
  EXPECT_THAT(Parse(args, config),
              HasSubstr("typo.ini:2: unknown setting \"poll-intervall\" (did you mean "
                        "\"poll-interval\"?)"));
}

// A bad value names where it was set: the command line, the environment or the file's line.
TEST_F(DaemonConfigTest, BadValuesSayWhereTheyCameFrom) {
  std::ofstream(dir_ / "fleet.conf") << "# fleet\nworkers = 0\n";
  std::vector<std::string> args = Required();
  args.insert(args.end(), {"--config", (dir_ / "fleet.conf").string()});
  SettingOrigins origins;
  {
    CLI::App app;
    DaemonConfig config;
    AddDaemonFlags(app, config);
    ASSERT_TRUE(ApplyConfigFile(args, app, &origins).ok());
  }
  EXPECT_EQ(origins.Annotate("--workers: 1 to 256", args),
            "--workers (set by " + (dir_ / "fleet.conf").string() + ":2): 1 to 256");
  ::setenv("TALOS_RECONCILER_LISTEN", "nowhere", 1);
  EXPECT_EQ(origins.Annotate("--listen: want host:port", args),
            "--listen (set by TALOS_RECONCILER_LISTEN): want host:port");
  args.insert(args.end(), {"--resync", "0s"});
  EXPECT_EQ(origins.Annotate("--resync: 1s to 24h", args),
            "--resync (set by the command line): 1s to 24h");
  EXPECT_EQ(origins.Annotate("--drain-timeout: 1s to 24h", args), "--drain-timeout: 1s to 24h");
}

TEST_F(DaemonConfigTest, MissingRequiredFlagIsNamed) {
  DaemonConfig config;
  EXPECT_THAT(Parse({"--repo", "x"}, config), HasSubstr("--state-dir"));
}

// The Talos credentials: a directory per cluster or one talosconfig with a context per cluster
// (--talosconfig, else $TALOSCONFIG as talosctl reads it); exactly one of the two.
TEST_F(DaemonConfigTest, OneTalosconfigInsteadOfACredentialsDirectory) {
  std::ofstream(dir_ / "talosconfig") << "context: a\ncontexts: {}\n";
  std::vector<std::string> base = Required();
  base.erase(base.begin() + 2, base.begin() + 4);  // no --credentials-dir
  struct Case {
    std::vector<std::string> extra;
    const char* env;
    std::string expected;  // empty: accepted
  };
  const std::string file = (dir_ / "talosconfig").string();
  for (const Case& c : std::vector<Case>{
           {{"--talosconfig", file}, nullptr, ""},
           {{}, file.c_str(), ""},
           {{}, nullptr, "--credentials-dir: give it or --talosconfig"},
           {{"--talosconfig", file, "--credentials-dir", (dir_ / "creds").string()},
            nullptr,
            "--credentials-dir: give it or --talosconfig"},
           {{"--talosconfig", (dir_ / "absent").string()},
            nullptr,
            "--talosconfig: " + (dir_ / "absent").string() + " is not a readable file"},
       }) {
    SCOPED_TRACE(c.expected);
    if (c.env != nullptr) ::setenv("TALOSCONFIG", c.env, 1);
    DaemonConfig config;
    std::vector<std::string> args = base;
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    ASSERT_EQ(Parse(args, config), "");
    absl::Status s = FinishDaemonConfig(config);
    ::unsetenv("TALOSCONFIG");
    if (c.expected.empty()) {
      EXPECT_TRUE(s.ok()) << s;
      EXPECT_EQ(config.talosconfig, dir_ / "talosconfig");
      continue;
    }
    EXPECT_THAT(s.message(), HasSubstr(c.expected));
  }
}

TEST_F(DaemonConfigTest, BadValuesNameTheFlag) {
  struct Case {
    std::vector<std::string> extra;
    std::string expected;
  };
  for (const Case& c : std::vector<Case>{
           {{"--poll-jitter", "0.9"}, "--poll-jitter: 0 to 0.5"},
           {{"--workers", "0"}, "--workers: 1 to 256"},
           {{"--status-branch", "main"}, "--status-branch: must differ from --branch"},
           {{"--listen", "8080"}, "--listen: want host:port"},
           {{"--resync", "0s"}, "--resync: 1s to 24h"},
           {{"--log-level", "loud"}, "--log-level"},
           {{"--installer-registry", "ftp://registry.example.com/a"},
            "--installer-registry: want http(s)://host[:port]/<repository>"},
           {{"--installer-registry", "https://registry.example.com/a", "--installer-registry-ttl",
             "0s"},
            "--installer-registry-ttl: 1s to 168h"},
           {{"--etcd-snapshots-keep", "0"}, "--etcd-snapshots-keep: 1 to 1000"},
       }) {
    DaemonConfig config;
    std::vector<std::string> args = Required();
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    ASSERT_EQ(Parse(args, config), "");
    absl::Status s = FinishDaemonConfig(config);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.expected;
    EXPECT_THAT(s.message(), HasSubstr(c.expected));
  }
  DaemonConfig config;
  std::vector<std::string> args = Required();
  args.insert(args.end(), {"--poll-interval", "soon"});
  EXPECT_THAT(Parse(args, config), HasSubstr("--poll-interval"));
}

TEST_F(DaemonConfigTest, CredentialsDirectoryMustExist) {
  DaemonConfig config;
  std::vector<std::string> args = Required();
  args[3] = (dir_ / "nope").string();
  ASSERT_EQ(Parse(args, config), "");
  EXPECT_THAT(FinishDaemonConfig(config).message(), HasSubstr("--credentials-dir"));
}

// Credentials that can never be used fail at start, naming the flag, instead of being retried.
TEST_F(DaemonConfigTest, UnusableGitCredentialsFailAtStart) {
  std::ofstream(dir_ / "token") << "t0ken\n";
  struct Case {
    std::string url;
    std::vector<std::string> extra;
    std::string expected;  // empty: accepted
  };
  for (const Case& c : std::vector<Case>{
           {"file:///r.git",
            {"--git-token-file", (dir_ / "missing").string()},
            "--git-token-file: cannot read"},
           {"file:///r.git",
            {"--git-known-hosts", (dir_ / "missing").string()},
            "--git-known-hosts: cannot read"},
           {"http://127.0.0.1:1/r.git",
            {"--git-token-file", (dir_ / "token").string()},
            "--git-token-file: refusing to send credentials over plain http://"},
           {"https://127.0.0.1:1/r.git", {"--git-token-file", (dir_ / "token").string()}, ""},
           {"http://127.0.0.1:1/r.git", {}, ""},  // anonymous plain http is fine
       }) {
    SCOPED_TRACE(c.url + " " + c.expected);
    DaemonConfig config;
    std::vector<std::string> args = Required();
    args[1] = c.url;
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    ASSERT_EQ(Parse(args, config), "");
    absl::Status s = FinishDaemonConfig(config);
    if (c.expected.empty()) {
      EXPECT_TRUE(s.ok()) << s;
      continue;
    }
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr(c.expected));
  }
}

TEST_F(DaemonConfigTest, InstallerRegistryIsOffUnlessGiven) {
  DaemonConfig config;
  ASSERT_EQ(Parse(Required(), config), "");
  ASSERT_TRUE(FinishDaemonConfig(config).ok());
  EXPECT_FALSE(config.installer_registry.has_value());
  std::vector<std::string> args = Required();
  args.insert(args.end(),
              {"--installer-registry", "https://registry.example.com/siderolabs/installer",
               "--installer-registry-timeout", "3s", "--installer-registry-ttl", "2h"});
  DaemonConfig with;
  ASSERT_EQ(Parse(args, with), "");
  ASSERT_TRUE(FinishDaemonConfig(with).ok());
  ASSERT_TRUE(with.installer_registry.has_value());
  EXPECT_EQ(with.installer_registry->origin, "https://registry.example.com");
  EXPECT_EQ(with.installer_registry->repository, "siderolabs/installer");
  EXPECT_EQ(with.installer_registry->timeout, std::chrono::seconds(3));
  EXPECT_EQ(with.installer_registry->ttl, std::chrono::hours(2));
}

TEST_F(DaemonConfigTest, ShutdownAndLivenessBoundsHaveRanges) {
  for (const char* flag : {"--shutdown-timeout", "--unhealthy-after"}) {
    DaemonConfig config;
    std::vector<std::string> args = Required();
    args.insert(args.end(), {flag, "0s"});
    ASSERT_EQ(Parse(args, config), "");
    absl::Status s = FinishDaemonConfig(config);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << flag;
    EXPECT_THAT(s.message(), HasSubstr(flag));
  }
  DaemonConfig config;
  ASSERT_EQ(Parse(Required(), config), "");
  EXPECT_EQ(config.shutdown_timeout, std::chrono::seconds(10));
  EXPECT_EQ(config.unhealthy_after, std::chrono::minutes(15));
}

TEST_F(DaemonConfigTest, LogFormatIsTextOrJson) {
  DaemonConfig config;
  ASSERT_EQ(Parse(Required(), config), "");
  EXPECT_EQ(config.log_format, "text");
  std::vector<std::string> args = Required();
  args.insert(args.end(), {"--log-format", "json"});
  ASSERT_EQ(Parse(args, config), "");
  EXPECT_EQ(config.log_format, "json");
  args.back() = "xml";
  EXPECT_THAT(Parse(args, config), HasSubstr("--log-format"));
}

TEST_F(DaemonConfigTest, NodePollIntervalTakesMilliseconds) {
  DaemonConfig config;
  std::vector<std::string> args = Required();
  args.insert(args.end(), {"--node-poll-interval", "250ms"});
  ASSERT_EQ(Parse(args, config), "");
  EXPECT_EQ(config.node_poll_interval, std::chrono::milliseconds(250));
}

// Every numeric setting has a range: the values just outside are refused naming the flag and
// the range, the bounds themselves are accepted.
TEST_F(DaemonConfigTest, EveryNumericFlagHasARange) {
  struct Case {
    std::string flag;
    std::vector<std::string> refused;
    std::vector<std::string> accepted;
  };
  const std::vector<Case> cases = {
      {"--poll-interval", {"0s", "25h"}, {"1s", "24h"}},
      {"--resync", {"0s", "25h"}, {"1s", "24h"}},
      {"--drain-timeout", {"0s", "25h"}, {"1s", "24h"}},
      {"--unhealthy-after", {"0s", "169h"}, {"1s", "168h"}},
      {"--shutdown-timeout", {"0s", "11m"}, {"1s", "10m"}},
      {"--node-poll-interval", {"9ms", "11m"}, {"10ms", "10m"}},
      {"--status-commit-window", {"61s"}, {"0ms", "1m"}},
      {"--poll-jitter", {"-0.1", "0.6"}, {"0", "0.5"}},
      {"--workers", {"0", "257"}, {"1", "256"}},
      {"--webhook-queue", {"0", "100001"}, {"1", "100000"}},
      {"--git-timeout", {"999ms", "61m"}, {"1s", "1h"}},
      {"--git-max-fetch-bytes", {"1048575"}, {"1048576"}},
      {"--snapshot-max-files", {"0", "1000001"}, {"1", "1000000"}},
      {"--preview-max-files", {"0", "1000001"}, {"1", "1000000"}},
      {"--snapshot-max-bytes", {"1048575"}, {"1048576"}},
      {"--preview-max-bytes", {"1048575"}, {"1048576"}},
      {"--listen",
       {"127.0.0.1:99999", "127.0.0.1:", ":80", "127.0.0.1:http", "8080"},
       {"127.0.0.1:0", "0.0.0.0:65535"}},
  };
  for (const Case& c : cases) {
    for (const std::string& value : c.refused) {
      SCOPED_TRACE(c.flag + " " + value);
      DaemonConfig config;
      std::vector<std::string> args = Required();
      args.insert(args.end(), {c.flag, value});
      const std::string parse_error = Parse(args, config);
      if (!parse_error.empty()) {
        EXPECT_THAT(parse_error, HasSubstr(c.flag));
        continue;
      }
      absl::Status s = FinishDaemonConfig(config);
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(s.message(), HasSubstr(c.flag + ":"));
    }
    for (const std::string& value : c.accepted) {
      SCOPED_TRACE(c.flag + " " + value);
      DaemonConfig config;
      std::vector<std::string> args = Required();
      args.insert(args.end(), {c.flag, value});
      ASSERT_EQ(Parse(args, config), "");
      EXPECT_TRUE(FinishDaemonConfig(config).ok()) << FinishDaemonConfig(config);
    }
  }
}

// The Git settings of the manual are flags: CA bundle, allowed signers, plain-http consent,
// the operation deadline, the fetch cap and the snapshot limits.
TEST_F(DaemonConfigTest, EveryGitSourceSettingIsAFlag) {
  std::ofstream(dir_ / "ca.pem") << "-----BEGIN CERTIFICATE-----\n";
  std::ofstream(dir_ / "allowed_signers") << "a@b ssh-ed25519 AAAA\n";
  std::ofstream(dir_ / "token") << "t0ken\n";
  DaemonConfig config;
  std::vector<std::string> args = Required();
  args[1] = "http://127.0.0.1:1/r.git";
  args.insert(args.end(), {"--git-ca-file", (dir_ / "ca.pem").string(), "--git-allowed-signers",
                           (dir_ / "allowed_signers").string(), "--git-allow-insecure-http",
                           "--git-token-file", (dir_ / "token").string(), "--git-timeout", "90s",
                           "--git-max-fetch-bytes", "2097152", "--snapshot-max-files", "7000",
                           "--snapshot-max-bytes", "134217728", "--preview-max-files", "50",
                           "--preview-max-bytes", "4194304"});
  ASSERT_EQ(Parse(args, config), "");
  ASSERT_TRUE(FinishDaemonConfig(config).ok()) << FinishDaemonConfig(config);
  EXPECT_EQ(Libgit2SettingsOf(config).https_ca_file, dir_ / "ca.pem");
  ASSERT_TRUE(config.git.verify_signatures.has_value());
  EXPECT_EQ(config.git.verify_signatures->allowed_signers_file, dir_ / "allowed_signers");
  EXPECT_TRUE(config.git.remote.auth.allow_insecure_http);
  EXPECT_EQ(config.git.remote.limits.operation_timeout, std::chrono::seconds(90));
  EXPECT_EQ(config.git.remote.limits.max_fetch_bytes, 2097152u);
  EXPECT_EQ(config.git.snapshot_limits.max_files, 7000u);
  EXPECT_EQ(config.git.snapshot_limits.max_total_bytes, 134217728u);
  EXPECT_EQ(config.git.preview_limits.max_files, 50u);
  EXPECT_EQ(config.git.preview_limits.max_total_bytes, 4194304u);
  for (const char* flag : {"--git-ca-file", "--git-allowed-signers"}) {
    DaemonConfig missing;
    std::vector<std::string> bad = Required();
    bad.insert(bad.end(), {flag, (dir_ / "absent").string()});
    ASSERT_EQ(Parse(bad, missing), "");
    EXPECT_THAT(FinishDaemonConfig(missing).message(),
                HasSubstr(std::string(flag).substr(2) + ": cannot read"));
  }
}

TEST_F(DaemonConfigTest, LeaderElectionFlagsHaveRangesAndAnIdentity) {
  {
    DaemonConfig config;
    std::vector<std::string> args = Required();
    args.insert(args.end(), {"--leader-elect", "--leader-elect-identity", "pod-a", "--shards", "4",
                             "--leader-elect-retry-period", "250ms"});
    ASSERT_EQ(Parse(args, config), "");
    ASSERT_TRUE(FinishDaemonConfig(config).ok());
    EXPECT_TRUE(config.leader_election.enabled);
    EXPECT_EQ(config.shards(), 4);
    EXPECT_EQ(config.leader_election.identity, "pod-a");
    EXPECT_EQ(config.leader_election.name, "talos-reconciler");
    EXPECT_EQ(config.leader_election.lease_duration, std::chrono::seconds(15));
    EXPECT_EQ(config.leader_election.renew_deadline, std::chrono::seconds(10));
    EXPECT_EQ(config.leader_election.retry_period, std::chrono::milliseconds(250));
  }
  {
    // No identity given: POD_NAME, as the chart sets it from the downward API.
    ::setenv("POD_NAME", "talos-reconciler-7d9f-abcde", 1);
    DaemonConfig config;
    std::vector<std::string> args = Required();
    args.push_back("--leader-elect");
    ASSERT_EQ(Parse(args, config), "");
    ASSERT_TRUE(FinishDaemonConfig(config).ok());
    EXPECT_EQ(config.leader_election.identity, "talos-reconciler-7d9f-abcde");
    ::unsetenv("POD_NAME");
  }
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--shards", "2"}, "--shards: needs --leader-elect"},
      {{"--leader-elect", "--shards", "0"}, "--shards: 1 to 1024"},
      {{"--leader-elect", "--leader-elect-renew-deadline", "20s"}, "--leader-elect-renew-deadline"},
      {{"--leader-elect", "--leader-elect-retry-period", "10s"}, "--leader-elect-renew-deadline"},
      {{"--leader-elect", "--leader-elect-lease-duration", "500ms"},
       "--leader-elect-lease-duration: 1s to 10m"},
      {{"--leader-elect", "--leader-elect-name", "Not_A_Name"}, "--leader-elect-name"},
  };
  for (const auto& [extra, message] : bad) {
    DaemonConfig config;
    std::vector<std::string> args = Required();
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_EQ(Parse(args, config), "") << message;
    const absl::Status s = FinishDaemonConfig(config);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_THAT(std::string(s.message()), HasSubstr(message));
  }
}

// Job mode needs an image to run and the --credentials-dir layout to mount; its other settings
// have ranges and shapes.
TEST_F(DaemonConfigTest, KubernetesUpgradeJobModeNeedsAnImageAndACredentialsDirectory) {
  std::ofstream(dir_ / "talosconfig") << "context: a\ncontexts: {}\n";
  const std::vector<std::string> job = {"--kubernetes-upgrade-mode", "job",
                                        "--kubernetes-upgrade-job-image", "example/tr:1"};
  {
    DaemonConfig config;
    std::vector<std::string> args = Required();
    args.insert(args.end(), job.begin(), job.end());
    args.insert(args.end(), {"--kubernetes-upgrade-job-secret", "prod=tr-talos-prod"});
    ASSERT_EQ(Parse(args, config), "");
    const absl::Status s = FinishDaemonConfig(config);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(config.upgrade_jobs.image, "example/tr:1");
    EXPECT_FALSE(config.kubernetes_manifests_no_prune);
  }
  {
    DaemonConfig config;
    std::vector<std::string> args = Required();
    args.push_back("--kubernetes-manifests-no-prune");
    ASSERT_EQ(Parse(args, config), "");
    EXPECT_TRUE(config.kubernetes_manifests_no_prune);
    EXPECT_FALSE(config.no_node_watches);
    args.push_back("--no-node-watches");
    ASSERT_EQ(Parse(args, config), "");
    EXPECT_TRUE(config.no_node_watches);
  }
  std::vector<std::string> one_file = {"--repo", "file:///r.git", "--state-dir",
                                       (dir_ / "state").string(), "--talosconfig",
                                       (dir_ / "talosconfig").string()};
  one_file.insert(one_file.end(), job.begin(), job.end());
  std::vector<std::string> with_job = Required();
  with_job.insert(with_job.end(), job.begin(), job.end());
  auto with = [&](std::vector<std::string> args, std::vector<std::string> extra) {
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {with(Required(), {"--kubernetes-upgrade-mode", "job"}),
       "--kubernetes-upgrade-job-image: required with --kubernetes-upgrade-mode job"},
      {one_file, "--talosconfig: --kubernetes-upgrade-mode job needs --credentials-dir"},
      {with(with_job, {"--kubernetes-upgrade-job-secret", "prod"}),
       "--kubernetes-upgrade-job-secret: \"prod\" is not CREDENTIALS=SECRET"},
      {with(with_job, {"--kubernetes-upgrade-job-deadline", "30s"}),
       "--kubernetes-upgrade-job-deadline: 1m to 168h"},
  };
  for (const auto& [args, message] : bad) {
    DaemonConfig config;
    ASSERT_EQ(Parse(args, config), "") << message;
    const absl::Status s = FinishDaemonConfig(config);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_THAT(std::string(s.message()), HasSubstr(message));
  }
}

fs::perms Mode(const fs::path& path) { return fs::status(path).permissions() & fs::perms::all; }

TEST_F(DaemonConfigTest, TheStateDirectoryIsPrivate) {
  DaemonConfig created;
  ASSERT_EQ(Parse(Required(), created), "");
  ASSERT_TRUE(FinishDaemonConfig(created).ok());
  EXPECT_EQ(Mode(dir_ / "state"), fs::perms::owner_all);
  EXPECT_EQ(created.etcd_snapshots_keep, 3);
  // One that exists, ours, readable by all: made private too.
  fs::permissions(dir_ / "state", fs::perms::owner_all | fs::perms::group_read |
                                      fs::perms::group_exec | fs::perms::others_read |
                                      fs::perms::others_exec);
  DaemonConfig existing;
  ASSERT_EQ(Parse(Required(), existing), "");
  ASSERT_TRUE(FinishDaemonConfig(existing).ok());
  EXPECT_EQ(Mode(dir_ / "state"), fs::perms::owner_all);
}

TEST_F(DaemonConfigTest, RegistryCredentialsGoOverHttpsOnlyUnlessAllowed) {
  std::ofstream(dir_ / "registry-credentials") << "robot:s3cret-PASSWORD\n";
  const std::string credentials =
      "--installer-registry-credentials-file=" + (dir_ / "registry-credentials").string();
  const auto finish = [&](std::vector<std::string> extra) {
    DaemonConfig config;
    std::vector<std::string> args = Required();
    args.insert(args.end(), extra.begin(), extra.end());
    EXPECT_EQ(Parse(args, config), "");
    return FinishDaemonConfig(config);
  };
  const absl::Status refused =
      finish({"--installer-registry", "http://127.0.0.1:5000/siderolabs/installer", credentials});
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.message(),
              HasSubstr("--installer-registry-credentials-file: refusing to send credentials "
                        "over plain http://"));
  EXPECT_THAT(refused.message(), ::testing::Not(HasSubstr("PASSWORD")));
  EXPECT_TRUE(finish({"--installer-registry", "http://127.0.0.1:5000/siderolabs/installer",
                      credentials, "--installer-registry-allow-insecure-http"})
                  .ok());
  EXPECT_TRUE(finish({"--installer-registry", "http://127.0.0.1:5000/siderolabs/installer"}).ok())
      << "without credentials nothing is sent in clear";
  EXPECT_TRUE(
      finish({"--installer-registry", "https://registry.test/siderolabs/installer", credentials})
          .ok());
}

}  // namespace
}  // namespace tr::reconciler
