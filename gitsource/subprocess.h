// A child process started with posix_spawn, with chosen descriptors as its stdin, stdout
// and stderr and no other descriptor inherited. gitsource runs the OpenSSH client this way
// for ssh remotes; tests run git and servers with it.
//
// A Subprocess that is destroyed while its child still runs kills the child (SIGKILL) and
// reaps it, so no child outlives its owner unnoticed.
//
// Thread-compatible: one thread owns a Subprocess.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tr::gitsource {

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH when it has no '/'
  // The child's whole environment ("NAME=value"); unset: inherit ours.
  std::optional<std::vector<std::string>> env;
  int stdin_fd = -1;  // -1: /dev/null
  int stdout_fd = -1;
  int stderr_fd = -1;
  std::filesystem::path working_dir;  // empty: ours
};

class Subprocess {
 public:
  // Starts the child. Returns Unavailable when it cannot be started (e.g. not found).
  static absl::StatusOr<Subprocess> Spawn(const SpawnOptions& options);

  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess();

  pid_t pid() const { return pid_; }

  // Waits at most `timeout` for the child to exit. Returns its wait status (see waitpid(2))
  // once it exited, nullopt while it still runs.
  std::optional<int> WaitFor(std::chrono::milliseconds timeout);
  // Waits for the child to exit; returns its wait status.
  int Wait();
  // Sends `signal` unless the child was already reaped.
  void Signal(int signal);

 private:
  Subprocess(pid_t pid, int pidfd) : pid_(pid), pidfd_(pidfd) {}
  void Release();

  pid_t pid_ = -1;
  int pidfd_ = -1;
  std::optional<int> status_;
};

// "exit 3", "signal 9": a wait status for messages.
std::string DescribeWaitStatus(int status);

}  // namespace tr::gitsource
