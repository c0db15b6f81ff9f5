// The process_* metrics every Prometheus client library exports (CPU time, memory, open file
// descriptors, start time), read from /proc/self at each scrape, in the text format.
#pragma once

#include <string>

namespace tr::reconciler {

// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_start_time_seconds, process_open_fds, process_max_fds; a family whose /proc file
// cannot be read is left out.
std::string RenderProcessMetrics();

}  // namespace tr::reconciler
