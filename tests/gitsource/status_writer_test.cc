// The status writer against a real git daemon (pushes run the server's hooks): commits on
// the status branch only, fast-forward only, retried on a fresh tip when someone else
// pushed first, coalesced, and read back after a restart.
#include "gitsource/status_writer.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <shared_mutex>
#include <thread>

#include "fmt/format.h"
#include "gitsource/git_source.h"
#include "gitsource/mirror.h"
#include "gitsource/pack_rollup.h"
#include "tests/gitsource/fixture.h"
#include "tests/support/servers.h"
#include "tests/support/simulated_env.h"
#include "tests/support/wait.h"

namespace tr::gitsource::testing {
namespace {

using std::chrono::milliseconds;

constexpr char kStatusBranch[] = "talos-reconciler/status";

// Simulated time from a fixed moment (commit times are checked), jitter at its middle.
class WriterEnv : public tr::test_support::SimulatedEnv {
 public:
  WriterEnv() : SimulatedEnv(std::chrono::system_clock::from_time_t(1'750'000'000)) {
    uniforms = {0.5};
  }
};

// An environment whose sleeps hold until the test releases them (its clock does not move), so a
// test can act while the writer waits out its coalescing window.
class GateEnv final : public WriterEnv {
 public:
  bool SleepFor(std::chrono::nanoseconds duration, std::stop_token stop) override {
    std::unique_lock lock(mu_);
    waits_.push_back(std::chrono::duration_cast<milliseconds>(duration));
    changed_.notify_all();
    changed_.wait(lock, stop, [&] { return released_ > 0; });
    if (released_ > 0) --released_;
    return !stop.stop_requested();
  }
  // Waits (up to 30 s) until `count` sleeps have begun; their durations.
  std::vector<milliseconds> WaitForSleeps(size_t count) {
    std::unique_lock lock(mu_);
    changed_.wait_for(lock, std::chrono::seconds(30), [&] { return waits_.size() >= count; });
    return waits_;
  }
  void Release() {
    std::lock_guard lock(mu_);
    ++released_;
    changed_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable_any changed_;
  std::vector<milliseconds> waits_;
  int released_ = 0;
};

class StatusWriterTest : public UpstreamTest {
 protected:
  void SetUp() override {
    UpstreamTest::SetUp();
    source_ = OpenSource(Config(daemon_.Url("profiles")));
    ASSERT_NE(source_, nullptr);
    writer_ = MakeWriter(*source_, config_);
  }

  void TearDown() override {
    UpstreamTest::TearDown();
    // Nothing but the desired branch (unchanged, checked above) and the status branch.
    const std::string refs = upstream_.GitBare({"for-each-ref", "--format=%(refname)"});
    EXPECT_TRUE(refs == "refs/heads/main" ||
                refs == fmt::format("refs/heads/main\nrefs/heads/{}", kStatusBranch))
        << refs;
  }

  std::unique_ptr<GitStatusWriter> MakeWriter(const LibGitSource& source,
                                              const StatusWriterConfig& config) {
    absl::StatusOr<std::unique_ptr<GitStatusWriter>> writer =
        GitStatusWriter::Create(source, config, env_);
    EXPECT_TRUE(writer.ok()) << writer.status();
    return writer.ok() ? *std::move(writer) : nullptr;
  }

  std::string StatusTip() const { return upstream_.Tip(kStatusBranch); }
  std::string Show(const std::string& what) const { return upstream_.GitBare({"show", what}); }
  int StatusCommits() const {
    return std::stoi(upstream_.GitBare({"rev-list", "--count", StatusTip()}));
  }

  // Installs a pre-receive hook (shell) in the served repository.
  void InstallPreReceiveHook(const std::string& body) {
    const std::filesystem::path hook = upstream_.bare() / "hooks/pre-receive";
    WriteFile(hook, "#!/bin/sh\ncat >/dev/null\n" + body);
    chmod(hook.c_str(), 0755);
  }

  // A commit on the status branch made by someone else, as `git push` would.
  std::string ForeignStatusCommit(const std::string& file, const std::string& content) {
    return upstream_.Commit({{file, content}}, "foreign " + file, kStatusBranch);
  }

  GitDaemon daemon_{served_};
  WriterEnv env_;
  StatusWriterConfig config_;
  std::unique_ptr<LibGitSource> source_;
  std::unique_ptr<GitStatusWriter> writer_;
};

TEST_F(StatusWriterTest, FirstWriteCreatesTheBranchWithTheConfiguredAuthor) {
  absl::StatusOr<StatusCommit> written =
      writer_->Write({{{"status/prod.yaml", "phase: Ready\n"}}, "prod: Ready"});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_TRUE(written->created);
  EXPECT_EQ(written->commit, StatusTip());
  EXPECT_EQ(Show(StatusTip() + ":status/prod.yaml"), "phase: Ready");
  EXPECT_EQ(upstream_.GitBare({"log", "-1", "--format=%an <%ae> %at %s", StatusTip()}),
            "talos-reconciler <talos-reconciler@localhost> 1750000000 prod: Ready");
  EXPECT_EQ(StatusCommits(), 1);
}

TEST_F(StatusWriterTest, UnchangedContentMakesNoCommit) {
  ASSERT_TRUE(writer_->Write({{{"status/prod.yaml", "phase: Ready\n"}}, "first"}).ok());
  const std::string tip = StatusTip();
  absl::StatusOr<StatusCommit> again =
      writer_->Write({{{"status/prod.yaml", "phase: Ready\n"}}, "again"});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->commit, tip);
  EXPECT_EQ(StatusTip(), tip);
}

TEST_F(StatusWriterTest, ManyClustersInOneWriteAreOneCommitAndFilesCanBeRemoved) {
  ASSERT_TRUE(
      writer_
          ->Write({{{"status/a.yaml", "a\n"}, {"status/b.yaml", "b\n"}, {"status/c.yaml", "c\n"}},
                   "three clusters"})
          .ok());
  EXPECT_EQ(StatusCommits(), 1);
  ASSERT_TRUE(writer_->Write({{{"status/b.yaml", std::nullopt}}, "b is gone"}).ok());
  EXPECT_EQ(StatusCommits(), 2);
  EXPECT_EQ(upstream_.GitBare({"ls-tree", "--name-only", "-r", StatusTip()}),
            "status/a.yaml\nstatus/c.yaml");
}

TEST_F(StatusWriterTest, ReadsBackTheLatestStatusAfterARestart) {
  absl::StatusOr<StatusFiles> empty = writer_->ReadLatest();
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_TRUE(empty->files.empty());
  ASSERT_TRUE(writer_->Write({{{"status/a.yaml", "a1\n"}, {"status/b.yaml", "b1\n"}}, "1"}).ok());
  ASSERT_TRUE(writer_->Write({{{"status/a.yaml", "a2\n"}}, "2"}).ok());
  // A new process with an empty state directory.
  GitSourceConfig config = Config(daemon_.Url("profiles"));
  config.state_dir = tmp_ / "state-after-restart";
  auto source = OpenSource(config);
  auto writer = MakeWriter(*source, config_);
  absl::StatusOr<StatusFiles> latest = writer->ReadLatest();
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->files, (std::map<std::string, std::string>{{"status/a.yaml", "a2\n"},
                                                         {"status/b.yaml", "b1\n"}}));
}

TEST_F(StatusWriterTest, PathsOutsideStatusAreRefused) {
  for (const std::string path :
       {"clusters/prod.yaml", "status/../clusters/prod.yaml", "status/.git/config",
        "/status/x.yaml", "status/", "status", "status//x.yaml", "status/.GIT/x", "status/a\nb"}) {
    EXPECT_EQ(writer_->Write({{{path, "x"}}, "bad"}).status().code(),
              absl::StatusCode::kInvalidArgument)
        << path;
  }
  EXPECT_EQ(StatusTip(), "");
}

TEST_F(StatusWriterTest, StatusBranchMustNotBeTheDesiredBranch) {
  for (const std::string branch : {"main", "main/status", "", "bad..name", "-x"}) {
    StatusWriterConfig config;
    config.branch = branch;
    EXPECT_EQ(GitStatusWriter::Create(*source_, config, env_).status().code(),
              absl::StatusCode::kInvalidArgument)
        << branch;
  }
}

TEST_F(StatusWriterTest, RejectedPushIsReappliedOnTheNewTipAfterABackoff) {
  const std::string base = ForeignStatusCommit("status/other.yaml", "theirs 1\n");
  // Someone else's push lands between our fetch and our push: the hook moves the branch
  // on to `next` the first time, so our push's compare-and-swap fails.
  const std::string next = ForeignStatusCommit("status/other.yaml", "theirs 2\n");
  upstream_.GitBare({"update-ref", fmt::format("refs/heads/{}", kStatusBranch), base});
  InstallPreReceiveHook(
      fmt::format("if [ ! -e raced ]; then : > raced; env -u GIT_QUARANTINE_PATH git update-ref "
                  "refs/heads/{} {}; fi\nexit 0\n",
                  kStatusBranch, next));
  absl::StatusOr<StatusCommit> written =
      writer_->Write({{{"status/prod.yaml", "phase: Ready\n"}}, "prod: Ready"});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(StatusTip(), written->commit);
  EXPECT_EQ(upstream_.GitBare({"rev-parse", written->commit + "^"}), next);
  EXPECT_EQ(Show(written->commit + ":status/other.yaml"), "theirs 2");
  EXPECT_EQ(Show(written->commit + ":status/prod.yaml"), "phase: Ready");
  // One retry, after the jittered delay for retry 1: 200ms step, half fixed + half * 0.5.
  EXPECT_EQ(env_.slept, std::vector<milliseconds>{milliseconds(150)});
}

TEST_F(StatusWriterTest, AfterItsOwnPushAForeignPushIsFollowedAtOnceAndNothingIsLost) {
  // The second write is built on the writer's own last commit without a fetch; someone else
  // pushed meanwhile, so that push is refused and the writer fetches and builds again at once
  // (no backoff: the refusal came from its own stale tip, not from a race).
  ASSERT_TRUE(writer_->Write({{{"status/prod.yaml", "phase: Ready\n"}}, "prod: Ready"}).ok());
  const std::string ours = StatusTip();
  ASSERT_TRUE(writer_->Write({{{"status/prod.yaml", "phase: Upgrading\n"}}, "prod: 1/5"}).ok());
  EXPECT_EQ(upstream_.GitBare({"rev-parse", StatusTip() + "^"}), ours);
  // Someone else's clone, up to date, pushes on top.
  upstream_.Git({"fetch", "--quiet", "origin"});
  upstream_.Git({"checkout", "--quiet", "-B", kStatusBranch, "origin/" + std::string(kStatusBranch)});
  const std::string theirs = ForeignStatusCommit("status/other.yaml", "theirs\n");
  absl::StatusOr<StatusCommit> written =
      writer_->Write({{{"status/prod.yaml", "phase: Ready 2\n"}}, "prod: Ready"});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(StatusTip(), written->commit);
  EXPECT_EQ(upstream_.GitBare({"rev-parse", written->commit + "^"}), theirs);
  EXPECT_EQ(Show(written->commit + ":status/other.yaml"), "theirs");
  EXPECT_EQ(Show(written->commit + ":status/prod.yaml"), "phase: Ready 2");
  EXPECT_TRUE(env_.slept.empty());
  EXPECT_EQ(StatusCommits(), 4);
}

TEST_F(StatusWriterTest, GivesUpAfterTheLastAttemptWithoutForcing) {
  const std::string theirs = ForeignStatusCommit("status/other.yaml", "theirs\n");
  InstallPreReceiveHook("echo 'not today' >&2\nexit 1\n");
  config_.backoff.max_attempts = 3;
  writer_ = MakeWriter(*source_, config_);
  absl::StatusOr<StatusCommit> written = writer_->Write({{{"status/prod.yaml", "x\n"}}, "x"});
  EXPECT_EQ(written.status().code(), absl::StatusCode::kAborted) << written.status();
  EXPECT_EQ(env_.slept.size(), 2u);
  EXPECT_EQ(StatusTip(), theirs);
}

TEST_F(StatusWriterTest, AFileTheGuardRefusesOnTheTipItWouldReplaceIsLeftOutAndTheRestGoesOut) {
  std::vector<std::string> seen;  // what the guard was shown for b, in order
  config_.guard = [&](const std::string& path, const std::optional<std::string>& on_tip,
                      const std::optional<std::string>&) -> std::string {
    if (path == "status/b.yaml") seen.push_back(on_tip.value_or("(none)"));
    return on_tip == "locked\n" ? path + " is locked" : "";
  };
  writer_ = MakeWriter(*source_, config_);
  ASSERT_TRUE(writer_->Write({{{"status/a.yaml", "a1\n"}, {"status/b.yaml", "b1\n"}}, "1"}).ok());
  // Someone else locks b on top of the writer's last commit. The next write is built on that
  // commit without a fetch (b1 there: not refused), the remote refuses the push, and the
  // batch is guarded again on the new tip, where b is locked.
  upstream_.Git({"fetch", "--quiet", "origin"});
  upstream_.Git({"checkout", "--quiet", "-B", kStatusBranch, "origin/" + std::string(kStatusBranch)});
  const std::string theirs = ForeignStatusCommit("status/b.yaml", "locked\n");
  absl::StatusOr<StatusCommit> written =
      writer_->Write({{{"status/a.yaml", "a2\n"}, {"status/b.yaml", "b2\n"}}, "2"});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_TRUE(written->created);
  EXPECT_EQ(written->refused,
            (std::map<std::string, std::string>{{"status/b.yaml", "status/b.yaml is locked"}}));
  EXPECT_EQ(upstream_.GitBare({"rev-parse", written->commit + "^"}), theirs);
  EXPECT_EQ(Show(written->commit + ":status/a.yaml"), "a2");
  EXPECT_EQ(Show(written->commit + ":status/b.yaml"), "locked");
  EXPECT_EQ(seen, (std::vector<std::string>{"(none)", "b1\n", "locked\n"}));
  // Everything refused: nothing to commit, the tip stays, the refusal is still reported.
  absl::StatusOr<StatusCommit> none = writer_->Write({{{"status/b.yaml", "b3\n"}}, "3"});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->created);
  EXPECT_EQ(none->commit, written->commit);
  EXPECT_EQ(none->refused.count("status/b.yaml"), 1u);
  EXPECT_EQ(StatusTip(), written->commit);
}

TEST_F(StatusWriterTest, CancelledWhileBackingOff) {
  ForeignStatusCommit("status/other.yaml", "theirs\n");
  InstallPreReceiveHook("exit 1\n");
  env_.sleep_budget = 0;  // every sleep is refused
  EXPECT_EQ(writer_->Write({{{"status/prod.yaml", "x\n"}}, "x"}).status().code(),
            absl::StatusCode::kCancelled);
}

TEST_F(StatusWriterTest, ConcurrentWritesCoalesce) {
  // The first writer's push is held in the server's hook until every other writer waits
  // behind it, so what is shown does not depend on how fast this machine is. The first push's
  // hook blocks reading a FIFO until the test writes a line into it; later pushes pass.
  const std::filesystem::path pushing = tmp_ / "pushing";
  const std::filesystem::path go = tmp_ / "go";
  ASSERT_EQ(mkfifo(go.c_str(), 0600), 0);
  InstallPreReceiveHook(fmt::format(
      "if [ ! -e '{0}' ]; then touch '{0}'; read line < '{1}'; fi\nexit 0\n", pushing.string(),
      go.string()));
  constexpr int kWriters = 8;
  std::vector<absl::StatusOr<StatusCommit>> results(kWriters, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  auto write = [&](int i) {
    results[i] = writer_->Write(
        {{{fmt::format("status/c{}.yaml", i), fmt::format("{}\n", i)}}, fmt::format("c{}", i)});
  };
  threads.emplace_back(write, 0);
  const bool first_pushing =
      tr::test_support::WaitUntil([&] { return std::filesystem::exists(pushing); });
  for (int i = 1; first_pushing && i < kWriters; ++i) threads.emplace_back(write, i);
  const bool all_queued = first_pushing && tr::test_support::WaitUntil([&] {
    return writer_->Queued() == static_cast<std::size_t>(kWriters - 1);
  });
  // Read and write, so that opening never blocks; open until the pushes are done, so that the
  // line waits in the FIFO for a hook that opens it late.
  const int release = open(go.c_str(), O_RDWR | O_CLOEXEC);
  const bool released = release >= 0 && ::write(release, "\n", 1) == 1;
  for (std::thread& t : threads) t.join();
  if (release >= 0) close(release);
  ASSERT_TRUE(released) << "cannot write to " << go;
  ASSERT_TRUE(first_pushing) << "the first push never reached the server";
  ASSERT_TRUE(all_queued) << "queued: " << writer_->Queued();
  for (int i = 0; i < kWriters; ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].status();
    EXPECT_EQ(Show(fmt::format("{}:status/c{}.yaml", results[i]->commit, i)), std::to_string(i));
  }
  // The seven that waited behind the first commit share the next one.
  for (int i = 2; i < kWriters; ++i) EXPECT_EQ(results[i]->commit, results[1]->commit);
  EXPECT_NE(results[1]->commit, results[0]->commit);
  const std::string files = upstream_.GitBare({"ls-tree", "--name-only", "-r", StatusTip()});
  EXPECT_EQ(std::count(files.begin(), files.end(), '\n') + 1, kWriters) << files;
}

// Updates that arrive within the window after a commit go out as one commit; the first after a
// quiet spell goes at once; each Write returns only once its own update is pushed.
TEST_F(StatusWriterTest, UpdatesWithinTheWindowAreOneCommit) {
  GateEnv gate;
  config_.coalesce_window = milliseconds(800);
  auto writer = GitStatusWriter::Create(*source_, config_, gate);
  ASSERT_TRUE(writer.ok()) << writer.status();
  ASSERT_TRUE((*writer)->Write({{{"status/a.yaml", "a\n"}}, "a"}).ok());  // no wait
  const int after_first = StatusCommits();

  absl::StatusOr<StatusCommit> b = absl::UnknownError("not run");
  absl::StatusOr<StatusCommit> c = absl::UnknownError("not run");
  std::thread tb([&] { b = (*writer)->Write({{{"status/b.yaml", "b\n"}}, "b"}); });
  // b came right after a commit (the fixed clock has not moved): it waits the whole window.
  EXPECT_EQ(gate.WaitForSleeps(1), std::vector<milliseconds>{milliseconds(800)});
  std::thread tc([&] { c = (*writer)->Write({{{"status/c.yaml", "c\n"}}, "c"}); });
  // c waits behind b's commit, the one thread waiting in the environment (b sleeps at the gate).
  ASSERT_TRUE(gate.Settle(1));
  ASSERT_EQ((*writer)->Queued(), 2u);
  gate.Release();
  tb.join();
  tc.join();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(b->commit, c->commit);
  EXPECT_EQ(StatusCommits(), after_first + 1);
  EXPECT_EQ(Show(b->commit + ":status/b.yaml"), "b");
  EXPECT_EQ(Show(b->commit + ":status/c.yaml"), "c");
  EXPECT_EQ(Show(StatusTip() + ":status/a.yaml"), "a");
}

// After a quiet spell up to `coalesce_burst` commits go out one after the other without a wait;
// then a commit waits for what is left of a window, and the credit comes back one commit per
// window of quiet.
TEST_F(StatusWriterTest, ABurstGoesOutAtOnceThenOneCommitPerWindow) {
  GateEnv gate;
  config_.coalesce_window = milliseconds(800);
  config_.coalesce_burst = 3;
  auto writer = GitStatusWriter::Create(*source_, config_, gate);
  ASSERT_TRUE(writer.ok()) << writer.status();
  // Released ahead, more than the two waits expected: a wait the writer should not make shows
  // in the sleeps, not as a hang.
  for (int i = 0; i < 10; ++i) gate.Release();
  auto write = [&](const std::string& name) {
    return (*writer)->Write({{{"status/" + name + ".yaml", name + "\n"}}, name}).ok();
  };
  for (const char* name : {"a", "b", "c"}) ASSERT_TRUE(write(name)) << name;
  EXPECT_EQ(gate.WaitForSleeps(0), std::vector<milliseconds>{}) << "a commit of the burst waited";
  gate.Advance(milliseconds(400));  // half a window's credit
  ASSERT_TRUE(write("d"));
  EXPECT_EQ(gate.WaitForSleeps(1), std::vector<milliseconds>{milliseconds(400)});
  gate.Advance(milliseconds(1600));  // two commits' credit
  for (const char* name : {"e", "f", "g"}) ASSERT_TRUE(write(name)) << name;
  EXPECT_EQ(gate.WaitForSleeps(2),
            (std::vector<milliseconds>{milliseconds(400), milliseconds(800)}));
  EXPECT_EQ(StatusCommits(), 7);
}

// A writer whose commits are at least 800 ms apart, after one commit (status/a.yaml), with
// news for status/b.yaml posted, held for a window (released), then held back by the window
// of its commit until `gate` is released again.
std::unique_ptr<GitStatusWriter> WriterWithNewsHeldBack(const LibGitSource& source,
                                                        StatusWriterConfig config, GateEnv& gate) {
  config.coalesce_window = milliseconds(800);
  auto writer = GitStatusWriter::Create(source, config, gate);
  EXPECT_TRUE(writer.ok()) << writer.status();
  if (!writer.ok()) return nullptr;
  EXPECT_TRUE((*writer)->Write({{{"status/a.yaml", "a\n"}}, "a"}).ok());
  EXPECT_TRUE((*writer)->Post({{{"status/b.yaml", "b\n"}}, "b: rebooting"}).ok());
  EXPECT_EQ(gate.WaitForSleeps(1), std::vector<milliseconds>{milliseconds(800)}) << "the hold";
  gate.Release();
  EXPECT_EQ(gate.WaitForSleeps(2), (std::vector<milliseconds>{milliseconds(800), milliseconds(800)}))
      << "the commit's window";
  return *std::move(writer);
}

// Posted news waits a window for a Write, which takes it along in its own commit at once: the
// news of a quick step costs the next step no push of its own.
TEST_F(StatusWriterTest, PostedNewsWaitsAWindowForAWriteToTakeItAlong) {
  GateEnv gate;
  StatusWriterConfig config = config_;
  config.coalesce_window = milliseconds(800);
  auto created = GitStatusWriter::Create(*source_, config, gate);
  ASSERT_TRUE(created.ok()) << created.status();
  ASSERT_TRUE((*created)->Post({{{"status/b.yaml", "b\n"}}, "b: pre-pulling"}).ok());
  ASSERT_EQ(gate.WaitForSleeps(1), std::vector<milliseconds>{milliseconds(800)})
      << "the news went out without waiting for a Write";
  absl::StatusOr<StatusCommit> c = (*created)->Write({{{"status/c.yaml", "c\n"}}, "c: start"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(StatusCommits(), 1);
  EXPECT_EQ(c->commit, StatusTip());
  EXPECT_EQ(Show(c->commit + ":status/b.yaml"), "b");
  EXPECT_EQ(Show(c->commit + ":status/c.yaml"), "c");
  EXPECT_EQ(gate.WaitForSleeps(1).size(), 1u) << "the Write waited for a window";
}

// A Post returns while its commit is still held back (here by the coalescing window); the
// writer's own thread makes the commit.
TEST_F(StatusWriterTest, APostReturnsAtOnceAndTheWritersThreadCommitsIt) {
  GateEnv gate;
  auto writer = WriterWithNewsHeldBack(*source_, config_, gate);
  ASSERT_NE(writer, nullptr);
  EXPECT_EQ(StatusCommits(), 1);
  gate.Release();
  // The writer's thread commits the news and waits for more.
  ASSERT_TRUE(gate.Settle(1));
  EXPECT_EQ(StatusCommits(), 2);
  EXPECT_EQ(Show(StatusTip() + ":status/b.yaml"), "b");
  EXPECT_EQ(upstream_.GitBare({"log", "-1", "--format=%s", StatusTip()}), "b: rebooting");
}

// A Write that comes while posted news waits for its commit joins it, and gets its result.
TEST_F(StatusWriterTest, APostedUpdateGoesOutWithTheNextWrite) {
  GateEnv gate;
  auto writer = WriterWithNewsHeldBack(*source_, config_, gate);
  ASSERT_NE(writer, nullptr);
  absl::StatusOr<StatusCommit> c = absl::UnknownError("not run");
  std::thread tc([&] { c = writer->Write({{{"status/c.yaml", "c\n"}}, "c"}); });
  // c waits behind the news's commit (held at the gate).
  ASSERT_TRUE(gate.Settle(1));
  ASSERT_EQ(writer->Queued(), 1u);
  gate.Release();
  tc.join();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(StatusCommits(), 2);
  EXPECT_EQ(c->commit, StatusTip());
  EXPECT_EQ(Show(c->commit + ":status/b.yaml"), "b");
  EXPECT_EQ(Show(c->commit + ":status/c.yaml"), "c");
}

// A posted update whose push failed is not lost: a Write that comes before its next try takes
// it along.
TEST_F(StatusWriterTest, APostedUpdateWhosePushFailedGoesOutWithTheNextCommit) {
  GateEnv gate;
  StatusWriterConfig config = config_;
  config.backoff.max_attempts = 1;
  auto writer = WriterWithNewsHeldBack(*source_, config, gate);
  ASSERT_NE(writer, nullptr);
  InstallPreReceiveHook("echo 'not now' >&2\nexit 1\n");
  gate.Release();  // the news's commit is pushed, and refused
  ASSERT_EQ(gate.WaitForSleeps(3).size(), 3u) << "the news's wait for its next try";
  EXPECT_EQ(StatusCommits(), 1);
  InstallPreReceiveHook("exit 0\n");
  absl::StatusOr<StatusCommit> c = absl::UnknownError("not run");
  std::thread tc([&] { c = writer->Write({{{"status/c.yaml", "c\n"}}, "c"}); });
  ASSERT_EQ(gate.WaitForSleeps(4).size(), 4u) << "the Write's window";
  // Both sleeps end, in whichever order: the posting thread finds the news gone or the commit
  // running, and waits again.
  gate.Release();
  gate.Release();
  tc.join();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(StatusCommits(), 2);
  EXPECT_EQ(Show(c->commit + ":status/b.yaml"), "b");
  EXPECT_EQ(Show(c->commit + ":status/c.yaml"), "c");
}

// A posted update whose push failed is tried again by the posting thread itself after the
// longest backoff step, with its own commit message, when no Write comes to take it along.
TEST_F(StatusWriterTest, APostedUpdateWhosePushFailedIsTriedAgainAfterABackoff) {
  GateEnv gate;
  StatusWriterConfig config = config_;
  config.backoff.max_attempts = 1;  // its one step: 200 ms, jittered to 150 (uniform 0.5)
  auto writer = WriterWithNewsHeldBack(*source_, config, gate);
  ASSERT_NE(writer, nullptr);
  InstallPreReceiveHook("echo 'not now' >&2\nexit 1\n");
  gate.Release();  // the news's commit is pushed, and refused
  ASSERT_EQ(gate.WaitForSleeps(3).back(), milliseconds(150)) << "the wait for the next try";
  EXPECT_EQ(StatusCommits(), 1);
  InstallPreReceiveHook("exit 0\n");
  gate.Advance(milliseconds(150));
  gate.Release();
  ASSERT_EQ(gate.WaitForSleeps(4).back(), milliseconds(800)) << "the news's hold for a Write";
  gate.Release();
  ASSERT_EQ(gate.WaitForSleeps(5).back(), milliseconds(650)) << "the rest of the commit's window";
  gate.Release();
  ASSERT_TRUE(gate.Settle(1));
  EXPECT_EQ(StatusCommits(), 2);
  EXPECT_EQ(Show(StatusTip() + ":status/b.yaml"), "b");
  EXPECT_EQ(upstream_.GitBare({"log", "-1", "--format=%s", StatusTip()}), "b: rebooting");
}

// Order holds: what a later Write says about a path replaces what was posted before it.
TEST_F(StatusWriterTest, AWriteAfterAPostOfTheSamePathWins) {
  ASSERT_TRUE(writer_->Post({{{"status/prod.yaml", "rebooting\n"}}, "news"}).ok());
  absl::StatusOr<StatusCommit> written =
      writer_->Write({{{"status/prod.yaml", "recorded\n"}}, "operation"});
  ASSERT_TRUE(written.ok()) << written.status();
  // The writer's thread has nothing left to commit: it waits for news again.
  ASSERT_TRUE(env_.Settle(1));
  EXPECT_EQ(writer_->Queued(), 0u);
  EXPECT_EQ(Show(written->commit + ":status/prod.yaml"), "recorded");
  EXPECT_EQ(Show(StatusTip() + ":status/prod.yaml"), "recorded");
}

TEST_F(StatusWriterTest, APostOutsideStatusIsRefusedAndNothingIsQueued) {
  absl::Status posted = writer_->Post({{{"clusters/prod.yaml", "x\n"}}, "no"});
  EXPECT_EQ(posted.code(), absl::StatusCode::kInvalidArgument) << posted;
  ASSERT_TRUE(writer_->Write({{{"status/a.yaml", "a\n"}}, "a"}).ok());
  EXPECT_EQ(upstream_.GitBare({"ls-tree", "--name-only", "-r", StatusTip()}), "status/a.yaml");
}

// A writer that goes while posted news waits for its commit stops its thread: the news is lost,
// nothing hangs.
TEST_F(StatusWriterTest, AWriterDestroyedWithNewsPendingStopsItsThread) {
  GateEnv gate;
  auto writer = WriterWithNewsHeldBack(*source_, config_, gate);
  ASSERT_NE(writer, nullptr);
  writer.reset();
  EXPECT_EQ(StatusCommits(), 1);
}

TEST_F(StatusWriterTest, ReadsAndWritesRunConcurrently) {
  std::vector<std::thread> threads;
  std::vector<absl::Status> failures;
  std::mutex mu;
  const auto record = [&](const absl::Status& status) {
    if (status.ok()) return;
    std::lock_guard lock(mu);
    failures.push_back(status);
  };
  threads.emplace_back([&] {
    for (int i = 0; i < 5; ++i) {
      record(writer_->Write({{{"status/prod.yaml", fmt::format("{}\n", i)}}, "prod"}).status());
    }
  });
  for (int reader = 0; reader < 3; ++reader) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) record(writer_->ReadLatest().status());
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_TRUE(failures.empty()) << failures.front();
  EXPECT_EQ(Show(StatusTip() + ":status/prod.yaml"), "4");
}

// A status commit's new objects (the file, the trees, the commit) are one pack, no loose file
// each, and git reads the commit from it.
TEST_F(StatusWriterTest, AStatusCommitIsOnePackOfItsNewObjects) {
  ASSERT_TRUE(source_->Poll().ok());
  ASSERT_TRUE(writer_->Write({{{"status/a.yaml", "a\n"}}, "a"}).ok());  // the branch's root
  const std::filesystem::path mirror = source_->mirror()->path();
  const std::vector<PackFile> before = ListPacks(mirror);
  absl::StatusOr<StatusCommit> c = writer_->Write({{{"status/b.yaml", "b\n"}}, "b"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(ListLooseObjects(mirror).empty());
  std::vector<PackFile> added;
  for (const PackFile& pack : ListPacks(mirror)) {
    if (std::none_of(before.begin(), before.end(),
                     [&](const PackFile& old) { return old.pack == pack.pack; })) {
      added.push_back(pack);
    }
  }
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].objects, 4u);  // the blob, the status/ tree, the root tree, the commit
  EXPECT_EQ(MustRun({"git", "-C", mirror.string(), "show", c->commit + ":status/b.yaml"}), "b");
  EXPECT_EQ(MustRun({"git", "-C", mirror.string(), "show", c->commit + ":status/a.yaml"}), "a");
  MustRun({"git", "-C", mirror.string(), "fsck", "--strict", "--no-dangling"});
}

// The git:// stream gathers libgit2's writes and sends them when 64 KiB are gathered and before
// it reads: a pack several times that size arrives whole, and the push's answer is read.
TEST_F(StatusWriterTest, APushOfSeveralTimesTheStreamsBufferArrivesWhole) {
  std::mt19937 random(28);
  const std::string alphabet =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
  std::map<std::string, std::optional<std::string>> files;
  for (int i = 0; i < 60; ++i) {
    std::string text;
    for (int j = 0; j < 4096; ++j) text += alphabet[random() % alphabet.size()];
    files.emplace(fmt::format("status/c-{}.yaml", i), text);
  }
  StatusUpdate update{files, "sixty clusters"};
  absl::StatusOr<StatusCommit> written = writer_->Write(std::move(update));
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_EQ(written->commit, StatusTip());
  for (const auto& [path, content] : files) {
    EXPECT_EQ(Show(StatusTip() + ":" + path), *content) << path;
  }
  upstream_.GitBare({"fsck", "--strict", "--no-dangling"});
}

// The mirror's compaction writes its pack while status commits go on, and deletes only what it
// read before: a status commit made meanwhile (here while the test holds the mirror, so that
// the compaction waits before deleting) keeps its pack, and git's own fsck finds the mirror
// whole.
TEST_F(StatusWriterTest, AStatusCommitMadeWhileTheCompactionWritesLosesNothing) {
  ASSERT_TRUE(source_->Poll().ok());  // a pack, and the status commit's
  ASSERT_TRUE(writer_->Write({{{"status/a.yaml", "a\n"}}, "a"}).ok());
  std::shared_ptr<Mirror> mirror = source_->mirror();
  const std::size_t packs_before = ListPacks(mirror->path()).size();
  absl::Status compacted = absl::UnknownError("not run");
  absl::StatusOr<StatusCommit> during = absl::UnknownError("not run");
  std::thread compaction;
  {
    std::shared_lock hold(mirror->lock());
    compaction = std::thread([&] { compacted = mirror->CompactIfNeeded(0, /*whole_growth=*/1); });
    if (!tr::test_support::WaitUntil(
            [&] { return ListPacks(mirror->path()).size() == packs_before + 1; })) {
      hold.unlock();
      compaction.join();
      FAIL() << "the compaction wrote no pack: " << compacted;
    }
    during = writer_->Write({{{"status/b.yaml", "written during\n"}}, "b"});
  }
  compaction.join();
  ASSERT_TRUE(compacted.ok()) << compacted;
  ASSERT_TRUE(during.ok()) << during.status();
  const std::string path = mirror->path().string();
  EXPECT_EQ(MustRun({"git", "-C", path, "show", during->commit + ":status/b.yaml"}),
            "written during");
  EXPECT_EQ(MustRun({"git", "-C", path, "show", during->commit + ":status/a.yaml"}), "a");
  MustRun({"git", "-C", path, "fsck", "--strict", "--no-dangling"});
}

TEST_F(StatusWriterTest, RacingGitPushesLoseNoStatusAndAreNeverOverwritten) {
  config_.backoff = {milliseconds(1), milliseconds(20), 50};
  auto writer = GitStatusWriter::Create(*source_, config_, Env::Default());  // real backoff
  ASSERT_TRUE(writer.ok()) << writer.status();
  ForeignStatusCommit("status/human.txt", "0\n");
  constexpr int kRounds = 6;
  std::vector<std::string> ours;
  std::thread writer_thread([&] {
    for (int i = 0; i < kRounds; ++i) {
      absl::StatusOr<StatusCommit> c =
          (*writer)->Write({{{"status/prod.yaml", fmt::format("round {}\n", i)}}, "prod"});
      ASSERT_TRUE(c.ok()) << c.status();
      ours.push_back(c->commit);
    }
  });
  std::vector<std::string> theirs;
  for (int i = 1; i <= kRounds; ++i) {  // a person pushing without force, rebasing on reject
    upstream_.Git({"fetch", "--quiet", "origin"});
    upstream_.Git({"reset", "--quiet", "--hard", std::string("origin/") + kStatusBranch});
    WriteFile(upstream_.work() / "status/human.txt", fmt::format("{}\n", i));
    upstream_.Git({"commit", "--quiet", "-am", "human"});
    while (RunCommand(
               {"git", "-C", upstream_.work().string(), "push", "--quiet", "origin", kStatusBranch})
               .exit_code != 0) {
      upstream_.Git({"pull", "--quiet", "--rebase", "origin", kStatusBranch});
    }
    theirs.push_back(upstream_.Git({"rev-parse", "HEAD"}));
  }
  writer_thread.join();
  const std::string tip = StatusTip();
  for (const std::string& commit : ours) {
    EXPECT_EQ(RunCommand({"git", "-C", upstream_.bare().string(), "merge-base", "--is-ancestor",
                          commit, tip})
                  .exit_code,
              0)
        << "our commit " << commit << " was overwritten";
  }
  for (const std::string& commit : theirs) {
    EXPECT_EQ(RunCommand({"git", "-C", upstream_.bare().string(), "merge-base", "--is-ancestor",
                          commit, tip})
                  .exit_code,
              0)
        << "their commit " << commit << " was overwritten";
  }
  EXPECT_EQ(Show(tip + ":status/prod.yaml"), fmt::format("round {}", kRounds - 1));
  EXPECT_EQ(Show(tip + ":status/human.txt"), std::to_string(kRounds));
}

class StatusWriterTransportTest : public UpstreamTest {};

TEST_F(StatusWriterTransportTest, PushesOverSmartHttpAndSsh) {
  WriterEnv env;
  SmartHttpServer http(served_, tmp_ / "http");
  SshServer sshd(tmp_ / "sshd");
  GitSourceConfig over_ssh = Config(sshd.Url(upstream_.bare()));
  WriteFile(tmp_ / "known_hosts", sshd.KnownHostsLine());
  over_ssh.remote.auth.known_hosts_file = tmp_ / "known_hosts";
  over_ssh.remote.auth.ssh_key_file = sshd.client_key();
  over_ssh.state_dir = tmp_ / "state-ssh";
  int round = 0;
  for (const GitSourceConfig& config : {Config(http.Url("profiles")), over_ssh}) {
    auto source = OpenSource(config);
    auto writer = GitStatusWriter::Create(*source, {}, env);
    ASSERT_TRUE(writer.ok()) << writer.status();
    const std::string content = fmt::format("round {}\n", ++round);
    absl::StatusOr<StatusCommit> written =
        (*writer)->Write({{{"status/prod.yaml", content}}, "prod"});
    ASSERT_TRUE(written.ok()) << written.status();
    EXPECT_EQ(upstream_.Tip(kStatusBranch), written->commit);
    absl::StatusOr<StatusFiles> latest = (*writer)->ReadLatest();
    ASSERT_TRUE(latest.ok()) << latest.status();
    EXPECT_EQ(latest->files.at("status/prod.yaml"), content);
  }
  EXPECT_TRUE(env.slept.empty());
}

}  // namespace
}  // namespace tr::gitsource::testing
