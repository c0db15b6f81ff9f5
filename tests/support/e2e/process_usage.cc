#include "tests/support/e2e/process_usage.h"

#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "fmt/format.h"

namespace tr::e2e {

namespace {

// utime + stime of a /proc stat line ("pid (comm) state ...": fields 14 and 15; comm may hold
// spaces, so they are counted from the closing parenthesis), in seconds.
std::optional<double> StatCpuSeconds(const std::string& text) {
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 > text.size()) return std::nullopt;
  std::istringstream rest(text.substr(close + 2));
  std::vector<std::string> fields;
  std::string field;
  while (rest >> field) fields.push_back(field);
  if (fields.size() < 13) return std::nullopt;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  return (std::stod(fields[11]) + std::stod(fields[12])) / ticks;
}

// A thread's /proc schedstat: the nanoseconds it ran and the times it was put on a CPU
// (between them, the nanoseconds it waited to run); nullopt when the kernel keeps none.
struct Schedstat {
  std::uint64_t ran_ns = 0;
  std::uint64_t runs = 0;
};
std::optional<Schedstat> ReadSchedstat(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::uint64_t ran_ns = 0, waited_ns = 0, runs = 0;
  if (!(file >> ran_ns >> waited_ns >> runs)) return std::nullopt;
  return Schedstat{ran_ns, runs};
}

// Calls `each(name, task directory)` for every thread of `pid`; NotFound when it is gone.
absl::Status ForEachThread(
    pid_t pid, const std::function<void(const std::string&, const std::filesystem::path&)>& each) {
  std::error_code ec;
  std::filesystem::directory_iterator tasks(fmt::format("/proc/{}/task", pid), ec);
  if (ec) return absl::NotFoundError(fmt::format("no process {}", pid));
  for (const auto& task : tasks) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (!std::getline(comm, name)) continue;  // ended meanwhile
    each(name, task.path());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::map<std::string, double>> ReadThreadCpuByName(pid_t pid) {
  std::map<std::string, double> by_name;
  absl::Status read = ForEachThread(pid, [&](const std::string& name,
                                             const std::filesystem::path& task) {
    // schedstat's first field: the nanoseconds the thread ran. Clock ticks (stat) would round
    // each of hundreds of short-lived threads down by up to 10 ms.
    if (const std::optional<Schedstat> sched = ReadSchedstat(task / "schedstat")) {
      by_name[name] += static_cast<double>(sched->ran_ns) / 1e9;
      return;
    }
    std::ifstream stat(task / "stat");
    const std::string text((std::istreambuf_iterator<char>(stat)),
                           std::istreambuf_iterator<char>());
    if (const std::optional<double> seconds = StatCpuSeconds(text)) by_name[name] += *seconds;
  });
  if (!read.ok()) return read;
  return by_name;
}

absl::StatusOr<std::map<std::string, double>> ReadThreadRunsByName(pid_t pid) {
  std::map<std::string, double> by_name;
  absl::Status read =
      ForEachThread(pid, [&](const std::string& name, const std::filesystem::path& task) {
        if (const std::optional<Schedstat> sched = ReadSchedstat(task / "schedstat")) {
          by_name[name] += static_cast<double>(sched->runs);
        }
      });
  if (!read.ok()) return read;
  return by_name;
}

absl::StatusOr<ThreadRuns> ReadThisThreadRuns() {
  const std::optional<Schedstat> sched = ReadSchedstat("/proc/thread-self/schedstat");
  if (!sched) return absl::UnavailableError("no /proc/thread-self/schedstat");
  return ThreadRuns{static_cast<double>(sched->ran_ns) / 1e9, sched->runs};
}

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
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const std::optional<double> ticked = StatCpuSeconds(text);
  if (!ticked) return absl::InternalError("unreadable /proc stat");
  usage.cpu_seconds = *ticked;
  // utime and stime count clock ticks (10 ms here): over a 20 s window of one reconcile a
  // second that is 0.5 ms per reconcile. The process's CPU clock counts nanoseconds, the
  // threads that ended included.
  clockid_t clock = 0;
  timespec spent{};
  if (clock_getcpuclockid(pid, &clock) == 0 && clock_gettime(clock, &spent) == 0) {
    usage.cpu_seconds =
        static_cast<double>(spent.tv_sec) + static_cast<double>(spent.tv_nsec) / 1e9;
  }
  return usage;
}

absl::StatusOr<int> CountOpenConnections(pid_t pid) {
  // The process's sockets are its /proc/<pid>/fd links "socket:[inode]"; /proc/<pid>/net/tcp
  // (and tcp6) give each socket's state (column 4, hexadecimal; 0A is LISTEN) and inode
  // (column 10).
  std::set<std::string> inodes;
  std::error_code listing;
  const std::filesystem::directory_iterator fds(fmt::format("/proc/{}/fd", pid), listing);
  if (listing) return absl::NotFoundError(fmt::format("no process {}", pid));
  for (const auto& fd : fds) {
    std::error_code gone;  // a descriptor closed since the listing
    const std::string target = std::filesystem::read_symlink(fd.path(), gone).string();
    if (target.starts_with("socket:[")) inodes.insert(target.substr(8, target.size() - 9));
  }
  // The tables are read in page-sized pieces, each resumed by position: while other processes
  // open and close sockets a line can come twice or be passed over. So count each socket once,
  // over two readings.
  std::set<std::string> connected;
  for (int reading = 0; reading < 2; ++reading) {
    for (const char* table : {"tcp", "tcp6"}) {
      std::ifstream in(fmt::format("/proc/{}/net/{}", pid, table));
      std::string line;
      std::getline(in, line);  // the header
      while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::vector<std::string> columns;
        for (std::string column; fields >> column && columns.size() < 10;) {
          columns.push_back(column);
        }
        if (columns.size() == 10 && columns[3] != "0A" && inodes.contains(columns[9])) {
          connected.insert(columns[9]);
        }
      }
    }
  }
  return static_cast<int>(connected.size());
}

}  // namespace tr::e2e
