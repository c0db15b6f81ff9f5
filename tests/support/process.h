// Test support: running commands (git, ssh-keygen, openssl) to completion, temporary
// directories, and small file helpers. Every command runs with a hermetic Git
// configuration (no global or system config) and a fixed identity.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace tr::gitsource::testing {

struct ProcessResult {
  int exit_code = -1;  // -1 when it did not exit normally or could not start
  std::string out;
  std::string err;
};

struct RunOptions {
  std::filesystem::path working_dir;
  std::vector<std::string> extra_env;  // "NAME=value", added to the hermetic environment
  std::string input;                   // written to stdin
  std::chrono::milliseconds timeout{60'000};
};

// Runs `argv` to completion, capturing its output. Kills it at the timeout.
ProcessResult RunCommand(const std::vector<std::string>& argv, const RunOptions& options = {});

// Like Run, but records a test failure when the command does not exit 0. Returns stdout
// without its trailing newline.
std::string MustRun(const std::vector<std::string>& argv, const RunOptions& options = {});

// The environment every command gets: PATH, HOME, no Git global/system config, a fixed
// author and committer.
std::vector<std::string> HermeticEnvironment();

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

void WriteFile(const std::filesystem::path& path, const std::string& content);
std::string ReadFile(const std::filesystem::path& path);

// The login name of the effective user.
std::string CurrentUser();

}  // namespace tr::gitsource::testing
