// Benchmark of the Git source against the git command line on the same repository: a
// profile repository of 1,000 profiles and 10,000 commits (made with git fast-import),
// served by `git daemon` on loopback. Measures the no-op poll (beside `git ls-remote`),
// the incremental fetch of one new commit (beside `git fetch` into a bare mirror) and the
// snapshot read of all profiles (beside `git archive` of the same paths), and prints
// medians and ratios (ours / git; below 1 means faster than git). Then the status writer:
// `--status-commits` commits of `--clusters` clusters' statuses (each commit changes every
// one), pushed to the same daemon, and this process's CPU per commit (goal ≤ 20 ms at 200).
//
// Usage: gitsource_bench [--profiles N] [--commits N] [--samples N] [--clusters N]
//                        [--status-commits N] [--max-packs N]
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "base/env.h"
#include "gitsource/git_source.h"
#include "gitsource/mirror.h"
#include "gitsource/pack_rollup.h"
#include "gitsource/status_writer.h"
#include "tests/bench/bench_row.h"
#include "tests/support/process.h"
#include "tests/support/repos.h"
#include "tests/support/servers.h"

namespace tr::gitsource::testing {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int profiles = 1000;
  int commits = 10000;
  int samples = 15;
  int clusters = 200;
  int status_commits = 60;
  int max_packs = 24;  // the mirror's compaction threshold (GitSourceConfig::max_mirror_packs)
};

std::string Profile(int cluster, int revision) {
  return fmt::format(
      "apiVersion: talos-reconciler.dev/v1alpha1\nkind: ClusterProfile\nmetadata:\n"
      "  name: cluster-{0:04}\nspec:\n  endpoints: [10.{1}.0.11, 10.{1}.0.12, 10.{1}.0.13]\n"
      "  credentials: cluster-{0:04}\n  talos:\n    version: 1.11.{2}\n"
      "    image: "
      "factory.talos.dev/metal-installer/"
      "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba\n"
      "  kubernetes:\n    version: 1.34.{2}\n  nodes:\n"
      "    - {{name: cp-0, address: 10.{1}.0.11, role: controlplane}}\n"
      "    - {{name: w-0, address: 10.{1}.1.21, role: worker}}\n"
      "  policy:\n    maxParallelWorkers: 1\n    nodeTimeout: 30m\n",
      cluster, cluster % 250, revision % 10);
}

std::string Data(const std::string& content) {
  return fmt::format("data {}\n{}\n", content.size(), content);
}

std::string CommitHeader(int n) {
  return fmt::format("commit refs/heads/main\ncommitter Bench <bench@example.com> {} +0000\n{}",
                     1'700'000'000 + n, Data(fmt::format("change {}", n)));
}

// The whole history as one fast-import stream: all profiles in the first commit, then one
// profile changed per commit.
std::string HistoryStream(const Options& options) {
  std::string stream = CommitHeader(0);
  stream +=
      "M 100644 inline reconciler.yaml\n" + Data("apiVersion: talos-reconciler.dev/v1alpha1\n");
  for (int c = 0; c < options.profiles; ++c) {
    stream += fmt::format("M 100644 inline clusters/cluster-{:04}.yaml\n", c) + Data(Profile(c, 0));
  }
  stream += "\n";
  for (int n = 1; n < options.commits; ++n) {
    const int cluster = n % options.profiles;
    stream += CommitHeader(n);
    stream += fmt::format("M 100644 inline clusters/cluster-{:04}.yaml\n", cluster) +
              Data(Profile(cluster, n / options.profiles + 1));
    stream += "\n";
  }
  return stream;
}

void AppendCommit(const UpstreamRepo& upstream, const Options& options, int n) {
  const int cluster = n % options.profiles;
  upstream.FastImport(CommitHeader(n) + "from refs/heads/main^0\n" +
                      fmt::format("M 100644 inline clusters/cluster-{:04}.yaml\n", cluster) +
                      Data(Profile(cluster, n)) + "\n");
}

double Millis(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

template <typename Body>
double Time(Body body) {
  const auto start = Clock::now();
  body();
  return Millis(Clock::now() - start);
}

void Require(bool ok, const std::string& what) {
  if (!ok) {
    std::fprintf(stderr, "gitsource_bench: %s failed\n", what.c_str());
    std::exit(1);
  }
}

void Git(const std::vector<std::string>& argv) {
  const ProcessResult r = RunCommand(argv);
  Require(r.exit_code == 0, fmt::format("{} ({})", argv.size() > 3 ? argv[3] : argv[0], r.err));
}

// This process's CPU time (user and system, every thread) so far; with `who` RUSAGE_THREAD,
// the calling thread's.
double CpuMillis(int who = RUSAGE_SELF) {
  rusage usage{};
  getrusage(who, &usage);
  const auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

// The CPU time so far of this process's thread named `name` (0 when there is none).
double ThreadCpuMillis(const std::string& name) {
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string thread_name;
    if (!std::getline(comm, thread_name) || thread_name != name) continue;
    // Fields 14 and 15 (utime, stime) after "pid (comm) state": the 12th and 13th after ')'.
    std::ifstream stat_file(task.path() / "stat");
    const std::string stat((std::istreambuf_iterator<char>(stat_file)), {});
    std::istringstream rest(stat.substr(stat.rfind(')') + 2));
    std::vector<std::string> fields{std::istream_iterator<std::string>(rest), {}};
    if (fields.size() < 13) return 0;
    return (std::stod(fields[11]) + std::stod(fields[12])) * 1e3 /
           static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  return 0;
}

// A status of about 600 bytes, a cluster of five nodes mid-rollout, different for each
// revision.
std::string ClusterStatus(int cluster, int revision) {
  std::string status = fmt::format(
      "cluster: cluster-{:04}\nphase: Upgrading\nrevision: {}\ntalos: {{current: 1.11.{}, "
      "desired: 1.12.0}}\nnodes:\n",
      cluster, revision, revision % 10);
  for (int node = 0; node < 5; ++node) {
    status += fmt::format(
        "  - {{name: node-{}, address: 10.{}.0.{}, phase: {}, version: 1.11.{}, "
        "started: 2026-11-28T10:{:02}:{:02}Z}}\n",
        node, cluster % 250, node + 11, node <= revision % 5 ? "Done" : "Pending", revision % 10,
        revision % 60, (cluster + node) % 60);
  }
  return status;
}

struct StatusCommitCost {
  double cpu_ms = 0;   // mean per commit, on the committing thread
  double wall_ms = 0;  // median per commit
  std::size_t packs_before = 0;  // in the mirror before the last compaction
  std::size_t packs = 0;         // in the mirror at the end
  double compaction_cpu_ms = 0;  // the mirror's compactions meanwhile and one at the end
  double compaction_wall_ms = 0;  // the one at the end
};

// `commits` status commits of `clusters` clusters, each changing every cluster's status.
StatusCommitCost MeasureStatusCommits(const LibGitSource& source, const Options& options,
                                      const std::filesystem::path& mirror) {
  absl::StatusOr<std::unique_ptr<GitStatusWriter>> writer =
      GitStatusWriter::Create(source, StatusWriterConfig{}, Env::Default());
  Require(writer.ok(), "status writer");
  std::vector<double> wall;
  double cpu = 0;
  const double compactor_before = ThreadCpuMillis(Mirror::kCompactorThreadName);
  for (int revision = 0; revision < options.status_commits; ++revision) {
    StatusUpdate update{{}, fmt::format("revision {}", revision)};
    for (int c = 0; c < options.clusters; ++c) {
      update.files[fmt::format("status/cluster-{:04}.yaml", c)] = ClusterStatus(c, revision);
    }
    const double cpu_before = CpuMillis(RUSAGE_THREAD);
    wall.push_back(Time([&] { Require((*writer)->Write(std::move(update)).ok(), "status"); }));
    cpu += CpuMillis(RUSAGE_THREAD) - cpu_before;
  }
  StatusCommitCost cost{cpu / std::max(1, options.status_commits), Median(wall)};
  // What the daemon's compaction (on the mirror's thread, asked for by the commits) spent
  // meanwhile, then one compaction of everything, here (after one that runs).
  cost.packs_before = ListPacks(mirror).size();
  const double final_before = CpuMillis(RUSAGE_THREAD);
  cost.compaction_wall_ms =
      Time([&] {
        Require(source.mirror()->CompactIfNeeded(0, /*whole_growth=*/1).ok(), "compaction");
      });
  cost.compaction_cpu_ms =
      ThreadCpuMillis(Mirror::kCompactorThreadName) - compactor_before +
      CpuMillis(RUSAGE_THREAD) - final_before;
  cost.packs = ListPacks(mirror).size();
  return cost;
}

void PrintRow(const std::string& operation, double ours, const std::string& theirs_name,
              double theirs) {
  std::printf("%-22s %10.2f ms   %-22s %10.2f ms   %6.2f\n", operation.c_str(), ours,
              theirs_name.c_str(), theirs, theirs > 0 ? ours / theirs : 0.0);
  bench::PrintBenchRow("Git source " + operation + " ÷ " + theirs_name, "",
                       fmt::format("{:.2f}", theirs > 0 ? ours / theirs : 0.0), std::nullopt,
                       fmt::format("{:.2f} ms against {:.2f} ms", ours, theirs));
}

int Main(const Options& options) {
  TempDir tmp;
  UpstreamRepo upstream(tmp / "served", "fleet");
  const double generate = Time([&] { upstream.FastImport(HistoryStream(options)); });
  GitDaemon daemon(tmp / "served");
  const std::string url = daemon.Url("fleet");

  GitSourceConfig config;
  config.remote.url = url;
  config.state_dir = tmp / "state";
  config.snapshot_limits.max_files = static_cast<std::size_t>(options.profiles) + 10;
  config.max_mirror_packs = static_cast<std::size_t>(options.max_packs);
  absl::StatusOr<std::unique_ptr<LibGitSource>> source = LibGitSource::Open(config, Env::Default());
  Require(source.ok(), "open");
  const std::filesystem::path mirror = tmp / "git-mirror.git";
  const double our_clone = Time([&] { Require((*source)->Poll().ok(), "first poll"); });
  const double git_clone = Time([&] {
    Git({"git", "clone", "--quiet", "--bare", url, mirror.string()});
  });

  std::vector<double> ours, theirs;
  for (int i = 0; i < options.samples; ++i) {
    ours.push_back(Time([&] {
      absl::StatusOr<RemoteHead> head = (*source)->Poll();
      Require(head.ok() && !head->fetched, "no-op poll");
    }));
    theirs.push_back(Time([&] { Git({"git", "ls-remote", url, "refs/heads/main"}); }));
  }
  const double noop = Median(ours), ls_remote = Median(theirs);

  ours.clear();
  theirs.clear();
  for (int i = 0; i < options.samples; ++i) {
    AppendCommit(upstream, options, options.commits + i);
    ours.push_back(Time([&] {
      absl::StatusOr<RemoteHead> head = (*source)->Poll();
      Require(head.ok() && head->fetched, "incremental poll");
    }));
    theirs.push_back(Time([&] {
      Git({"git", "-C", mirror.string(), "fetch", "--quiet", "origin",
           "+refs/heads/main:refs/heads/main"});
    }));
  }
  const double fetch = Median(ours), git_fetch = Median(theirs);

  absl::StatusOr<RemoteHead> head = (*source)->Poll();
  Require(head.ok(), "poll");
  ours.clear();
  theirs.clear();
  for (int i = 0; i < options.samples; ++i) {
    ours.push_back(Time([&] {
      absl::StatusOr<ProfileSnapshot> snapshot = (*source)->Snapshot(head->commit);
      Require(
          snapshot.ok() && snapshot->files.size() == static_cast<std::size_t>(options.profiles) + 1,
          "snapshot");
    }));
    theirs.push_back(Time([&] {
      Git({"git", "-C", mirror.string(), "archive", "--format=tar", "-o",
           (tmp / "archive.tar").string(), head->commit, "clusters", "reconciler.yaml"});
    }));
  }
  const double snapshot = Median(ours), archive = Median(theirs);

  std::printf(
      "gitsource: %d profiles, %d commits (generated in %.0f ms), git:// on loopback, "
      "median of %d\n",
      options.profiles, options.commits, generate, options.samples);
  std::printf("%-22s %13s   %-22s %13s   %6s\n", "operation", "ours", "git", "", "ratio");
  PrintRow("clone (first poll)", our_clone, "git clone --bare", git_clone);
  PrintRow("no-op poll", noop, "git ls-remote", ls_remote);
  PrintRow("incremental fetch", fetch, "git fetch", git_fetch);
  PrintRow("snapshot read", snapshot, "git archive", archive);

  const StatusCommitCost status =
      MeasureStatusCommits(**source, options, config.state_dir / "mirror.git");
  std::printf("status commit, %d clusters: %.1f ms CPU (mean of %d), %.1f ms wall (median)\n",
              options.clusters, status.cpu_ms, options.status_commits, status.wall_ms);
  const double compaction_share = status.compaction_cpu_ms / std::max(1, options.status_commits);
  std::printf("the mirror's compactions meanwhile and one at the end (%zu packs → %zu, %.0f ms "
              "wall): %.0f ms CPU, %.1f ms per commit\n",
              status.packs_before, status.packs, status.compaction_wall_ms,
              status.compaction_cpu_ms, compaction_share);
  bench::PrintBenchRow("mirror compaction CPU per status commit", "",
                       fmt::format("{:.1f} ms", compaction_share), std::nullopt,
                       fmt::format("{} commits' packs rolled up in {:.0f} ms CPU (on the "
                                   "mirror's own thread in the daemon)",
                                   options.status_commits, status.compaction_cpu_ms));
  bench::PrintBenchRow(fmt::format("status commit CPU, {} clusters", options.clusters),
                       "≤ 20 ms", fmt::format("{:.1f} ms", status.cpu_ms),
                       options.clusters >= 200 ? std::optional<bool>(status.cpu_ms <= 20)
                                               : std::nullopt,
                       fmt::format("every status changed; {:.1f} ms wall, median of {}",
                                   status.wall_ms, options.status_commits));
  return 0;
}

}  // namespace
}  // namespace tr::gitsource::testing

int main(int argc, char** argv) {
  tr::gitsource::testing::Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--profiles") options.profiles = value;
    if (flag == "--commits") options.commits = value;
    if (flag == "--samples") options.samples = value;
    if (flag == "--clusters") options.clusters = value;
    if (flag == "--status-commits") options.status_commits = value;
    if (flag == "--max-packs") options.max_packs = value;
  }
  return tr::gitsource::testing::Main(options);
}
