#include "gitsource/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

// glibc 2.36 declares these without C linkage guards.
extern "C" {
#include <sys/pidfd.h>
}

#include <cerrno>
#include <cstring>
#include <utility>

#include "fmt/format.h"

extern char** environ;

namespace tr::gitsource {
namespace {

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

}  // namespace

absl::StatusOr<Subprocess> Subprocess::Spawn(const SpawnOptions& options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("no program to run");
  FileActions actions;
  const int targets[3] = {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO};
  const int sources[3] = {options.stdin_fd, options.stdout_fd, options.stderr_fd};
  for (int i = 0; i < 3; ++i) {
    if (sources[i] >= 0) {
      posix_spawn_file_actions_adddup2(actions.get(), sources[i], targets[i]);
    } else {
      posix_spawn_file_actions_addopen(actions.get(), targets[i], "/dev/null",
                                       i == 0 ? O_RDONLY : O_WRONLY, 0);
    }
  }
  posix_spawn_file_actions_addclosefrom_np(actions.get(), 3);
  if (!options.working_dir.empty()) {
    posix_spawn_file_actions_addchdir_np(actions.get(), options.working_dir.c_str());
  }
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> argv = CStrings(options.argv);
  std::vector<char*> envp;
  if (options.env.has_value()) envp = CStrings(*options.env);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, argv[0], actions.get(), &attributes, argv.data(),
                              options.env.has_value() ? envp.data() : environ);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) {
    return absl::UnavailableError(
        fmt::format("cannot start {}: {}", options.argv[0], std::strerror(rc)));
  }
  const int pidfd = pidfd_open(pid, 0);
  return Subprocess(pid, pidfd);
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      pidfd_(std::exchange(other.pidfd_, -1)),
      status_(std::exchange(other.status_, std::nullopt)) {}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    Release();
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::exchange(other.pidfd_, -1);
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

Subprocess::~Subprocess() { Release(); }

void Subprocess::Release() {
  if (pid_ > 0 && !status_.has_value()) {
    Signal(SIGKILL);
    Wait();
  }
  if (pidfd_ >= 0) close(pidfd_);
  pidfd_ = -1;
  pid_ = -1;
}

std::optional<int> Subprocess::WaitFor(std::chrono::milliseconds timeout) {
  if (status_.has_value() || pid_ <= 0) return status_;
  if (pidfd_ >= 0) {
    pollfd fd = {pidfd_, POLLIN, 0};
    while (poll(&fd, 1, static_cast<int>(timeout.count())) < 0 && errno == EINTR) {
    }
  }
  int status = 0;
  pid_t reaped;
  while ((reaped = waitpid(pid_, &status, WNOHANG)) < 0 && errno == EINTR) {
  }
  if (reaped == pid_) status_ = status;
  return status_;
}

int Subprocess::Wait() {
  if (status_.has_value() || pid_ <= 0) return status_.value_or(0);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = status;
  return status;
}

void Subprocess::Signal(int signal) {
  if (pid_ <= 0 || status_.has_value()) return;
  if (pidfd_ >= 0) {
    pidfd_send_signal(pidfd_, signal, nullptr, 0);
  } else {
    kill(pid_, signal);
  }
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return fmt::format("exit {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("signal {}", WTERMSIG(status));
  return fmt::format("status {}", status);
}

}  // namespace tr::gitsource
