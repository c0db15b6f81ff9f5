// The size of the process's own futex hash, where Linux queues a thread that waits on a lock or
// a condition variable. Since Linux 6.16 a threaded process gets a private hash of
// 4 × min(threads, online CPUs) buckets, at least 16 (kernel/futex/core.c,
// futex_hash_allocate_default): 16 on a 2-CPU host, whatever the thread count. A process of
// hundreds or thousands of threads (the daemon's workers and informers, the simulator's servers)
// then walks a chain of tens to hundreds of waiters at every wake: `futex_wake` was 81% of the
// simulator's gRPC threads' samples at 1,000 clusters (docs/benchmarks.md).
#pragma once

#include "absl/status/statusor.h"

namespace tr {

// Grows the private futex hash to four buckets per thread for the process's threads now plus
// `more_threads` (a power of two, at most 65,536); never shrinks it. Once set, the kernel no
// longer sizes it by itself, so a process whose thread count keeps growing calls this again.
// Returns the buckets in use; an error on a kernel without a private hash (before 6.16, or
// built without CONFIG_FUTEX_PRIVATE_HASH), where the system-wide hash of 256 × CPUs serves.
absl::StatusOr<int> GrowFutexHash(int more_threads = 0);

}  // namespace tr
