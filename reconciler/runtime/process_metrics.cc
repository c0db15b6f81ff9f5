#include "reconciler/runtime/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "fmt/format.h"

namespace tr::reconciler {
namespace {

void Family(std::string& out, std::string_view name, std::string_view help, std::string_view type,
            double value) {
  out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n{0} {3}\n", name, help, type, value);
}

// The fields of /proc/self/stat after the command name (which may hold spaces and parentheses),
// so that fields[0] is the state, field 3 of proc(5).
std::vector<std::string> StatFields() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(text.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

// The boot time in seconds since the epoch (`btime` of /proc/stat).
std::optional<double> BootTime() {
  std::ifstream in("/proc/stat");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("btime ", 0) == 0) return std::stod(line.substr(6));
  }
  return std::nullopt;
}

}  // namespace

std::string RenderProcessMetrics() {
  std::string out;
  const std::vector<std::string> f = StatFields();
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  // proc(5) numbers from 1: utime 14, stime 15, starttime 22, vsize 23, rss 24; f[0] is field 3.
  if (f.size() > 21 && ticks > 0) {
    Family(out, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
           "counter", (std::stod(f[11]) + std::stod(f[12])) / ticks);
    Family(out, "process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge",
           std::stod(f[20]));
    Family(out, "process_resident_memory_bytes", "Resident memory size in bytes.", "gauge",
           std::stod(f[21]) * static_cast<double>(sysconf(_SC_PAGESIZE)));
    if (const std::optional<double> boot = BootTime()) {
      Family(out, "process_start_time_seconds",
             "Start time of the process since unix epoch in seconds.", "gauge",
             *boot + std::stod(f[19]) / ticks);
    }
  }
  std::error_code ec;
  size_t fds = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++fds;
  }
  if (!ec) Family(out, "process_open_fds", "Number of open file descriptors.", "gauge", fds);
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    Family(out, "process_max_fds", "Maximum number of open file descriptors.", "gauge",
           static_cast<double>(limit.rlim_cur));
  }
  return out;
}

}  // namespace tr::reconciler
