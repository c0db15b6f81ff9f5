// What a running process costs, read from /proc: peak and current resident memory and the CPU
// time it used so far. Benchmarks read it from the reconciler daemon and the simulator.
//
// Thread-safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace tr::e2e {

struct ProcessUsage {
  long peak_rss_kib = 0;   // VmHWM
  long rss_kib = 0;        // VmRSS
  long rss_anon_kib = 0;   // RssAnon: the part of VmRSS that is not file-backed (code, libraries)
  double cpu_seconds = 0;  // user + system, to the nanosecond (the process's CPU clock)
  int threads = 0;
};

// NotFound when the process is gone.
absl::StatusOr<ProcessUsage> ReadProcessUsage(pid_t pid);

// The CPU seconds each group of the process's threads used so far, by thread name (their
// /proc comm: base/thread_name.h), to the nanosecond (/proc schedstat; clock ticks of 10 ms
// where the kernel keeps none). A thread that ended is in no group (its CPU stays in
// ProcessUsage::cpu_seconds). NotFound when the process is gone.
absl::StatusOr<std::map<std::string, double>> ReadThreadCpuByName(pid_t pid);

// How many times each group of the process's threads was put on a CPU so far (/proc schedstat's
// third field), by thread name: a thread that sleeps and wakes counts one run a wake.
// NotFound when the process is gone.
absl::StatusOr<std::map<std::string, double>> ReadThreadRunsByName(pid_t pid);

// The calling thread's CPU time and runs so far (/proc/thread-self/schedstat).
struct ThreadRuns {
  double cpu_seconds = 0;
  uint64_t runs = 0;
};
absl::StatusOr<ThreadRuns> ReadThisThreadRuns();

// How many TCP connections the process holds open: its sockets (IPv4 and IPv6) in any state but
// LISTEN, established or closing. NotFound when the process is gone.
absl::StatusOr<int> CountOpenConnections(pid_t pid);

}  // namespace tr::e2e
