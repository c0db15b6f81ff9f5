#include "tests/support/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/env.h"
#include "gitsource/subprocess.h"

namespace tr::gitsource::testing {
namespace fs = std::filesystem;

std::vector<std::string> HermeticEnvironment() {
  std::vector<std::string> env = {
      "GIT_CONFIG_NOSYSTEM=1",          "GIT_CONFIG_GLOBAL=/dev/null",
      "GIT_AUTHOR_NAME=Test Author",    "GIT_AUTHOR_EMAIL=author@example.com",
      "GIT_COMMITTER_NAME=Test Author", "GIT_COMMITTER_EMAIL=author@example.com",
      "GIT_TERMINAL_PROMPT=0",          "LC_ALL=C",
  };
  for (const char* name : {"PATH", "HOME", "TMPDIR"}) {
    if (const char* value = std::getenv(name)) env.push_back(std::string(name) + "=" + value);
  }
  return env;
}

namespace {

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Moves data between the child's pipes until both outputs end or the deadline passes.
bool Pump(int in, int out, int err, const std::string& input, ProcessResult& result,
          Env::TimePoint deadline) {
  std::size_t written = 0;
  if (input.empty() && in >= 0) {
    close(in);
    in = -1;
  }
  while (out >= 0 || err >= 0) {
    pollfd fds[3] = {{out, POLLIN, 0}, {err, POLLIN, 0}, {in, POLLOUT, 0}};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Env::Default().Now());
    if (left.count() <= 0) return false;
    if (poll(fds, 3, static_cast<int>(left.count())) < 0 && errno != EINTR) return false;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].revents == 0) continue;
      char buffer[65536];
      const ssize_t got = read(fds[i].fd, buffer, sizeof buffer);
      if (got > 0) {
        (i == 0 ? result.out : result.err).append(buffer, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EAGAIN) {
        close(fds[i].fd);
        (i == 0 ? out : err) = -1;
      }
    }
    if (in >= 0 && fds[2].revents != 0) {
      const ssize_t sent = write(in, input.data() + written, input.size() - written);
      if (sent > 0) written += static_cast<std::size_t>(sent);
      if (sent < 0 && errno != EAGAIN) written = input.size();
      if (written == input.size()) {
        close(in);
        in = -1;
      }
    }
  }
  if (in >= 0) close(in);
  return true;
}

}  // namespace

ProcessResult RunCommand(const std::vector<std::string>& argv, const RunOptions& options) {
  ProcessResult result;
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    result.err = "cannot create pipes";
    return result;
  }
  std::vector<std::string> env = HermeticEnvironment();
  env.insert(env.end(), options.extra_env.begin(), options.extra_env.end());
  SpawnOptions spawn{argv, env, in[0], out[1], err[1], options.working_dir};
  absl::StatusOr<Subprocess> child = Subprocess::Spawn(spawn);
  close(in[0]);
  close(out[1]);
  close(err[1]);
  if (!child.ok()) {
    close(in[1]);
    close(out[0]);
    close(err[0]);
    result.err = std::string(child.status().message());
    return result;
  }
  SetNonBlocking(in[1]);
  SetNonBlocking(out[0]);
  SetNonBlocking(err[0]);
  signal(SIGPIPE, SIG_IGN);
  const auto deadline = Env::Default().Now() + options.timeout;
  if (!Pump(in[1], out[0], err[0], options.input, result, deadline)) {
    child->Signal(SIGKILL);
    result.err += "\n(killed at the timeout)";
  }
  const int status = child->Wait();
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string MustRun(const std::vector<std::string>& argv, const RunOptions& options) {
  ProcessResult result = RunCommand(argv, options);
  if (result.exit_code != 0) {
    std::string command;
    for (const std::string& a : argv) command += a + " ";
    ADD_FAILURE() << "command failed (" << result.exit_code << "): " << command << "\n"
                  << result.err;
  }
  while (!result.out.empty() && result.out.back() == '\n') result.out.pop_back();
  return result.out;
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/tr-gitsource-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
  path_ = fs::canonical(pattern);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void WriteFile(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

std::string CurrentUser() {
  const passwd* pw = getpwuid(geteuid());
  return pw != nullptr ? pw->pw_name : "root";
}

}  // namespace tr::gitsource::testing
