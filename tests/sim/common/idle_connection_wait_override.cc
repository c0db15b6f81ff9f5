// Linked into the talos-sim binary only: defines the function cpp-httplib's server loop calls
// (through the shared library's PLT, so the binary's definition is the one the dynamic linker
// binds) to wait for a kept-alive connection's next request. Why: idle_connection_wait.h.
// Were a later httplib to inline its wait, this definition would simply go unused.
#include <ctime>

#include "tests/sim/common/idle_connection_wait.h"

namespace httplib::detail {

bool keep_alive(int sock, time_t keep_alive_timeout_sec);

bool keep_alive(int sock, time_t keep_alive_timeout_sec) {
  return tr::sim::WaitForNextRequest(sock, keep_alive_timeout_sec);
}

}  // namespace httplib::detail
