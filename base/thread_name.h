// The name of the calling thread as `ps -L`, `top -H` and /proc/<pid>/task/*/comm show it, so
// that an operator (and fleet_scale_bench) can tell the daemon's threads apart by their work.
#pragma once

namespace tr {

// Names the calling thread `name`; Linux keeps its first 15 characters. Best effort.
void NameThisThread(const char* name);

}  // namespace tr
