#include "tests/support/e2e/daemon_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "fmt/format.h"
#include "tests/support/e2e/sim_process.h"

namespace tr::e2e {
namespace fs = std::filesystem;

absl::StatusOr<int> FreePort(const std::string& host) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;
  if (inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
    close(fd);
    return absl::InvalidArgumentError("not an IPv4 address: " + host);
  }
  socklen_t length = sizeof address;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    return absl::UnavailableError(fmt::format("cannot bind {}:0", host));
  }
  close(fd);
  return ntohs(address.sin_port);
}

DaemonProcess::DaemonProcess(DaemonOptions options, fs::path log_file)
    : options_(std::move(options)), log_file_(std::move(log_file)) {}

DaemonProcess::~DaemonProcess() { Kill(); }

namespace {

// A hard link (or, across file systems, a copy) of the built daemon beside `log_file`: the
// linker writes a new file in place of the old one, so what is linked here stays the binary
// the run started with.
absl::StatusOr<fs::path> PinBinary(const fs::path& log_file) {
  const fs::path built = BuiltBinary("reconciler/talos-reconciler");
  const fs::path pinned = log_file.string() + ".talos-reconciler";
  std::error_code error;
  fs::remove(pinned, error);
  fs::create_hard_link(built, pinned, error);
  if (error) fs::copy_file(built, pinned, error);
  if (error) {
    return absl::InternalError(
        fmt::format("cannot link {} to {}: {}", built.string(), pinned.string(), error.message()));
  }
  return pinned;
}

}  // namespace

std::vector<std::string> DaemonProcess::Argv() const {
  const fs::path binary = binary_.empty() ? BuiltBinary("reconciler/talos-reconciler") : binary_;
  std::vector<std::string> argv = {binary.string(),
                                   "run",
                                   "--repo",
                                   options_.repo_url,
                                   "--credentials-dir",
                                   options_.credentials_dir.string(),
                                   "--state-dir",
                                   options_.state_dir.string(),
                                   "--listen",
                                   options_.listen,
                                   "--poll-interval",
                                   options_.poll_interval,
                                   "--resync",
                                   options_.resync,
                                   "--node-poll-interval",
                                   options_.node_poll_interval,
                                   "--drain-timeout",
                                   options_.drain_timeout,
                                   "--workers",
                                   std::to_string(options_.workers),
                                   "--log-level",
                                   options_.log_level};
  argv.insert(argv.end(), options_.extra_args.begin(), options_.extra_args.end());
  return argv;
}

absl::Status DaemonProcess::Start() {
  if (running()) return absl::FailedPreconditionError("the daemon is running");
  if (binary_.empty()) {
    absl::StatusOr<fs::path> pinned = PinBinary(log_file_);
    if (!pinned.ok()) return pinned.status();
    binary_ = *pinned;
  }
  ++starts_;
  {
    std::ofstream marker(log_file_, std::ios::app);
    marker << fmt::format("=== start {} ===\n", starts_);
  }
  const int log = open(log_file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) return absl::InternalError("cannot open " + log_file_.string());
  auto process = gitsource::Subprocess::Spawn({.argv = Argv(),
                                               .env = std::nullopt,
                                               .stdin_fd = -1,
                                               .stdout_fd = log,
                                               .stderr_fd = log,
                                               .working_dir = log_file_.parent_path()});
  close(log);
  if (!process.ok()) return process.status();
  process_.emplace(*std::move(process));
  return absl::OkStatus();
}

void DaemonProcess::Kill() {
  if (!process_.has_value()) return;
  process_->Signal(SIGKILL);
  process_->Wait();
}

absl::StatusOr<int> DaemonProcess::Terminate(std::chrono::milliseconds timeout) {
  if (!process_.has_value()) return absl::FailedPreconditionError("never started");
  process_->Signal(SIGTERM);
  auto status = process_->WaitFor(timeout);
  if (status.has_value()) return *status;
  Kill();
  return absl::DeadlineExceededError(
      fmt::format("talos-reconciler did not exit within {} ms of SIGTERM", timeout.count()));
}

bool DaemonProcess::running() { return process_.has_value() && !process_->WaitFor({}).has_value(); }

std::optional<int> DaemonProcess::exit_status() {
  if (!process_.has_value()) return std::nullopt;
  return process_->WaitFor({});
}

std::optional<int> DaemonProcess::WaitForExit(std::chrono::milliseconds within) {
  if (!process_.has_value()) return std::nullopt;
  return process_->WaitFor(within);
}

absl::StatusOr<HttpReply> DaemonProcess::Get(const std::string& path) const {
  const auto colon = options_.listen.rfind(':');
  httplib::Client client(options_.listen.substr(0, colon),
                         std::stoi(options_.listen.substr(colon + 1)));
  client.set_connection_timeout(std::chrono::seconds(2));
  client.set_read_timeout(std::chrono::seconds(10));
  auto reply = client.Get(path);
  if (!reply) {
    return absl::UnavailableError(
        fmt::format("GET {}{}: {}", options_.listen, path, httplib::to_string(reply.error())));
  }
  return HttpReply{.status = reply->status, .body = reply->body};
}

std::string DaemonProcess::log() const {
  std::ifstream in(log_file_, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace tr::e2e
