#include "tests/support/e2e/process_usage.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fmt/format.h"

namespace tr::e2e {

absl::StatusOr<ProcessUsage> ReadProcessUsage(pid_t pid) {
  ProcessUsage usage;
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  if (!status || !stat) return absl::NotFoundError(fmt::format("no process {}", pid));
  std::string line;
  while (std::getline(status, line)) {
    std::istringstream fields(line);
    std::string key;
    long value = 0;
    fields >> key >> value;
    if (key == "VmHWM:") usage.peak_rss_kib = value;
    if (key == "VmRSS:") usage.rss_kib = value;
    if (key == "RssAnon:") usage.rss_anon_kib = value;
    if (key == "Threads:") usage.threads = static_cast<int>(value);
  }
  // /proc/<pid>/stat: "pid (comm) state ..." — utime and stime are fields 14 and 15; comm may
  // hold spaces, so count from the closing parenthesis.
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  std::istringstream rest(text.substr(text.rfind(')') + 2));
  std::vector<std::string> fields;
  std::string field;
  while (rest >> field) fields.push_back(field);
  if (fields.size() < 13) return absl::InternalError("unreadable /proc stat");
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  usage.cpu_seconds = (std::stod(fields[11]) + std::stod(fields[12])) / ticks;
  return usage;
}

}  // namespace tr::e2e
