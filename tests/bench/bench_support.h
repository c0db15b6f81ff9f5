// What the end-to-end benchmarks share: a fleet of many
// 5-node clusters with explicit loopback addresses, raising the descriptor limit, waiting
// until every cluster of a fleet is Ready, and setting up a world at rest (fleet, profiles,
// daemon, every cluster Ready) before a benchmark changes something.
//
// Thread-compatible.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "fmt/format.h"
#include "tests/bench/bench_row.h"
#include "tests/support/e2e/e2e_world.h"
#include "tests/support/e2e/process_usage.h"

namespace tr::e2e {

using bench::PrintBenchRow;

// talos_reconciler_reconciles_total from the daemon's /metrics, summed over its outcomes; -1
// when it cannot be read.
inline long DaemonReconciles(E2eWorld& world) {
  auto reply = world.daemon().Get("/metrics");
  if (!reply.ok()) return -1;
  const std::string key = "\ntalos_reconciler_reconciles_total";
  long total = -1;
  for (size_t at = reply->body.find(key); at != std::string::npos;
       at = reply->body.find(key, at + 1)) {
    const size_t end = reply->body.find('\n', at + 1);
    const std::string line = reply->body.substr(at + 1, end - at - 1);
    long n = 0;
    if (!absl::SimpleAtoi(line.substr(line.rfind(' ') + 1), &n)) return -1;
    total = std::max(total, 0L) + n;
  }
  return total;
}

// Bytes of the regular files under `dir` (0 for one that does not exist).
inline std::uintmax_t DirectoryBytes(const std::filesystem::path& dir) {
  std::uintmax_t bytes = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::end(it); it.increment(ec)) {
    if (it->is_regular_file(ec)) bytes += it->file_size(ec);
  }
  return bytes;
}

// Reads the command line as "--name N" pairs of positive numbers, handing each to
// `set(name, value)`, which returns false for a name it does not take. False, with a message
// (`usage` for an unknown name), on anything else.
inline bool ReadPositiveFlags(int argc, char** argv, const char* usage,
                              const std::function<bool(const std::string&, int)>& set) {
  if (argc % 2 == 0) {
    std::fprintf(stderr, "%s\n", usage);
    return false;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    int value = 0;
    if (!absl::SimpleAtoi(argv[i + 1], &value) || value <= 0) {
      std::fprintf(stderr, "%s needs a positive number\n", argv[i]);
      return false;
    }
    if (!set(argv[i], value)) {
      std::fprintf(stderr, "%s\n", usage);
      return false;
    }
  }
  return true;
}

// A thousand node listeners and their connections need more than the usual 1024 descriptors.
inline void RaiseFileLimit() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
}

// Clusters c-000 … of `control_planes` control planes and `workers` workers (3 and 2 unless
// said) on `talos`, with explicit addresses 127.A.B.C, as many whole clusters per /24 as fit in
// 250 addresses (50 of 5 nodes), so a fleet larger than one /24 fits.
inline std::vector<ClusterDef> LargeFleet(int clusters, const std::string& talos,
                                          int control_planes = 3, int workers = 2) {
  const int a = 100 + static_cast<int>(getpid() % 100);
  const int size = control_planes + workers;
  const int per_net = 250 / size;
  std::vector<ClusterDef> fleet;
  for (int c = 0; c < clusters; ++c) {
    ClusterDef cluster = MakeCluster(fmt::format("c-{:03}", c), control_planes, workers, talos);
    for (size_t n = 0; n < cluster.nodes.size(); ++n) {
      cluster.nodes[n].address = fmt::format("127.{}.{}.{}", a, 200 + c / per_net,
                                             (c % per_net) * size + static_cast<int>(n) + 1);
    }
    fleet.push_back(std::move(cluster));
  }
  return fleet;
}

// Waits until every one of `names` has been seen Ready on Talos `talos` (with `commit` applied
// unless empty), reading the status branch each time its tip moves. Only the files of clusters
// not seen Ready yet are read, and only those that changed since they were last are decoded:
// the bench's CPU while it waits is taken from the machine the daemon and the simulator share
// (decoding every file at every tip was a sixth of the machine at 300 clusters).
inline absl::Status WaitAllReady(E2eWorld& world, const std::vector<std::string>& names,
                                 const std::string& talos, const std::string& commit,
                                 std::chrono::minutes timeout) {
  std::string checked_tip;
  std::map<std::string, std::string> read;  // by cluster, the blob last read
  std::vector<std::string> pending = names;
  // Only a file with the Ready phase line is decoded: the bench shares the machine with the
  // daemon it measures, and decoding every changed file cost a tenth of it at 1,000 clusters.
  const auto ready = [&](const std::string& name, const StatusBlob& file) {
    if (file.text.find("\nphase: Ready\n") == std::string::npos) return false;
    absl::StatusOr<core::ClusterStatus> s = DecodeStatusFile(name, file.text);
    return s.ok() && s->phase == core::ClusterPhase::kReady && s->talos.current == talos &&
           (commit.empty() || s->desired_commit_applied == commit);
  };
  const bool done = world.WaitUntil(timeout, [&] {
    const std::string tip = world.repo().StatusTip();
    if (tip.empty() || tip == checked_tip) return false;
    checked_tip = tip;
    auto changed = world.repo().StatusBlobsChanged(pending, read);
    if (!changed.ok()) return false;
    for (const auto& [name, file] : *changed) read[name] = file.blob;
    std::erase_if(pending, [&](const std::string& name) {
      const auto file = changed->find(name);
      return file != changed->end() && ready(name, file->second);
    });
    return pending.empty();
  });
  if (done) return absl::OkStatus();
  return absl::DeadlineExceededError(fmt::format(
      "{} of {} clusters Ready on {}", names.size() - pending.size(), names.size(), talos));
}

// What each group of a process's threads added between two readings by thread name
// (ReadThreadCpuByName's CPU seconds, ReadThreadRunsByName's runs), most first; groups that
// added nothing are left out.
inline std::vector<std::pair<double, std::string>> ThreadGrowth(
    const std::map<std::string, double>& before, const std::map<std::string, double>& after) {
  std::vector<std::pair<double, std::string>> spent;
  for (const auto& [name, seconds_after] : after) {
    const auto found = before.find(name);
    const double seconds = seconds_after - (found == before.end() ? 0 : found->second);
    if (seconds > 0) spent.emplace_back(seconds, name);
  }
  std::sort(spent.rbegin(), spent.rend());
  return spent;
}

// Sleeps through `window` in sleeps of one second, as a daemon resynced each second does between
// reconciles, and returns the CPU time this machine charged the sleeping thread per wake, in
// microseconds (its /proc schedstat): what a wake costs here before any work. 0 when unreadable.
inline double SleepMeasuringWakeCost(std::chrono::seconds window) {
  const absl::StatusOr<ThreadRuns> before = ReadThisThreadRuns();
  const auto end = std::chrono::steady_clock::now() + window;
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::seconds(1), end - std::chrono::steady_clock::now()));
  }
  const absl::StatusOr<ThreadRuns> after = ReadThisThreadRuns();
  if (!before.ok() || !after.ok() || after->runs <= before->runs) return 0;
  return (after->cpu_seconds - before->cpu_seconds) * 1e6 /
         static_cast<double>(after->runs - before->runs);
}

// A new directory /tmp/tr-bench-<name>-XXXXXX for one benchmark run; empty when none could be
// made. The benchmark removes it when the run succeeded (a failed run's logs stay there).
inline std::filesystem::path BenchDirectory(const std::string& name) {
  std::string pattern = "/tmp/tr-bench-" + name + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return {};
  return pattern;
}

// Prints why a benchmark run failed and the end of the world's logs; returns a failed run's exit
// status.
inline int RunFailed(const E2eWorld& world, const absl::Status& status) {
  std::fprintf(stderr, "%s\n%s\n", std::string(status.message()).c_str(),
               world.Diagnostics().c_str());
  return 1;
}

// A world at rest, before the benchmark changes anything.
struct AtRest {
  std::vector<ClusterDef> fleet;
  FleetOptions sim;
  std::string talos;  // the version every node runs and every profile asks for
  std::vector<std::string> policy = {};  // each profile's policy lines
  std::map<std::string, std::string> files = {};  // more repository files (reconciler.yaml…)
  std::function<void(DaemonOptions&)> daemon = {};
  std::chrono::minutes timeout{2};  // for every cluster to be Ready
};

// Starts the simulator with `at_rest.fleet`, pushes a profile per cluster, starts the daemon,
// and waits until every cluster is Ready. Returns the cluster names, in the fleet's order.
inline absl::StatusOr<std::vector<std::string>> StartAtRest(E2eWorld& world,
                                                            const AtRest& at_rest) {
  if (auto st = world.StartFleet(at_rest.fleet, at_rest.sim); !st.ok()) return st;
  std::vector<std::string> names;
  std::map<std::string, ProfileDef> profiles;
  for (const auto& c : at_rest.fleet) {
    names.push_back(c.name);
    profiles[c.name] = AtTalos(at_rest.talos, at_rest.policy);
  }
  world.PushProfiles(profiles, "initial profiles", at_rest.files);
  if (auto st = world.StartDaemon(at_rest.daemon); !st.ok()) return st;
  if (auto st = WaitAllReady(world, names, at_rest.talos, "", at_rest.timeout); !st.ok()) {
    return absl::DeadlineExceededError(
        fmt::format("before the change: {}\n{}", std::string(st.message()), world.Diagnostics()));
  }
  return names;
}

}  // namespace tr::e2e
