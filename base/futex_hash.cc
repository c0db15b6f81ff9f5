#include "base/futex_hash.h"

#include <sys/prctl.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace tr {
namespace {

// From linux/prctl.h of Linux 6.16; Debian bookworm's headers predate them.
constexpr int kPrFutexHash = 78;
constexpr int kPrFutexHashSetSlots = 1;
constexpr int kPrFutexHashGetSlots = 2;
constexpr unsigned kMostBuckets = 1U << 16;

// num_threads, the 20th field of /proc/self/stat (proc(5)); the fields after the command name
// (in parentheses, which may hold spaces) start with the 3rd.
int ThreadsNow() {
  std::ifstream stat("/proc/self/stat");
  std::string line;
  std::getline(stat, line);
  const size_t after_name = line.rfind(')');
  if (after_name == std::string::npos) return 1;
  std::istringstream fields(line.substr(after_name + 1));
  std::string field;
  for (int n = 3; n < 20 && fields >> field; ++n) {
  }
  long threads = 0;
  fields >> threads;
  return static_cast<int>(std::clamp(threads, 1L, 1L << 20));
}

absl::Status Errno(const char* what) {
  return absl::UnavailableError(std::string(what) + ": " + std::strerror(errno));
}

}  // namespace

absl::StatusOr<int> GrowFutexHash(int more_threads) {
  const int now = prctl(kPrFutexHash, kPrFutexHashGetSlots, 0, 0, 0);
  // 0 is the system-wide hash (no private one yet, or chosen so): grown from there too.
  if (now < 0) return Errno("prctl(PR_FUTEX_HASH, GET_SLOTS)");
  const unsigned threads = static_cast<unsigned>(ThreadsNow() + std::max(more_threads, 0));
  const unsigned wanted = std::min(std::bit_ceil(4 * threads), kMostBuckets);
  if (static_cast<unsigned>(now) >= wanted) return now;
  if (prctl(kPrFutexHash, kPrFutexHashSetSlots, wanted, 0, 0) != 0) {
    return Errno("prctl(PR_FUTEX_HASH, SET_SLOTS)");
  }
  return static_cast<int>(wanted);
}

}  // namespace tr
