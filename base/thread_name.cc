#include "base/thread_name.h"

#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace tr {

void NameThisThread(const char* name) {
  constexpr std::size_t kMost = 15;  // TASK_COMM_LEN less its terminating zero
  const std::string cut(name, std::min(std::strlen(name), kMost));
  (void)pthread_setname_np(pthread_self(), cut.c_str());
}

}  // namespace tr
