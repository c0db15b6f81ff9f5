// The real `talos-reconciler run` as a child process: started with the flags of a test, its
// stderr (one line per decision) appended to a log file across restarts, killed with SIGKILL
// or stopped with SIGTERM, and asked over HTTP for /healthz, /readyz and /metrics.
//
// Thread-compatible: one thread owns a DaemonProcess.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gitsource/subprocess.h"

namespace tr::e2e {

struct DaemonOptions {
  std::string repo_url;
  std::filesystem::path credentials_dir;
  std::filesystem::path state_dir;
  std::string listen;  // "127.a.b.c:port"
  std::string poll_interval = "1s";
  std::string resync = "2s";
  std::string node_poll_interval = "50ms";
  std::string drain_timeout = "30s";
  int workers = 4;
  std::string log_level = "info";
  std::vector<std::string> extra_args;
};

// A port on `host` (a loopback address) that nothing listened on a moment ago: bound with port
// 0, read back, released. Tests take the host from their own loopback /24, so another test
// cannot take the port in between.
absl::StatusOr<int> FreePort(const std::string& host);

struct HttpReply {
  int status = 0;
  std::string body;
};

class DaemonProcess {
 public:
  DaemonProcess(DaemonOptions options, std::filesystem::path log_file);
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  // Starts the daemon (again), with the same flags and state directory; its stderr and stdout
  // go to the end of the log file after a "=== start N ===" line. FailedPrecondition while it
  // runs. Every start runs the binary as it was at the first one (a link to it beside the log
  // file): a rebuild of the tree during a long run replaces the built file, and starting it
  // while the linker writes it fails (ETXTBSY).
  absl::Status Start();
  // SIGKILL, then reaps it. No-op when it is not running.
  void Kill();
  // SIGTERM; returns its wait status once it exited, DeadlineExceeded (and SIGKILL) when it did
  // not exit within `timeout`.
  absl::StatusOr<int> Terminate(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  bool running();
  // The wait status once it exited (nullopt while running or never started).
  std::optional<int> exit_status();
  // Waits at most `within` for it to exit (on its pidfd: the exit itself wakes the wait); its
  // wait status, nullopt when it still runs or never started.
  std::optional<int> WaitForExit(std::chrono::milliseconds within);
  pid_t pid() const { return process_ ? process_->pid() : -1; }
  int starts() const { return starts_; }

  // GET http://<listen><path>; Unavailable when nothing answers.
  absl::StatusOr<HttpReply> Get(const std::string& path) const;

  std::vector<std::string> Argv() const;
  std::string log() const;
  const std::filesystem::path& log_file() const { return log_file_; }
  const DaemonOptions& options() const { return options_; }

 private:
  DaemonOptions options_;
  std::filesystem::path log_file_;
  std::optional<gitsource::Subprocess> process_;
  std::filesystem::path binary_;  // set by the first Start
  int starts_ = 0;
};

}  // namespace tr::e2e
