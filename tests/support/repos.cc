#include "tests/support/repos.h"

#include "tests/support/process.h"

namespace tr::gitsource::testing {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> GitArgs(const fs::path& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-C", dir.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace

UpstreamRepo::UpstreamRepo(const fs::path& root, const std::string& name)
    : bare_(root / (name + ".git")), work_(root / (name + "-work")) {
  MustRun({"git", "init", "--quiet", "--bare", "--initial-branch=main", bare_.string()});
  GitBare({"config", "http.receivepack", "true"});
  MustRun({"git", "init", "--quiet", "--initial-branch=main", work_.string()});
  Git({"remote", "add", "origin", bare_.string()});
}

std::string UpstreamRepo::Git(const std::vector<std::string>& args) const {
  return MustRun(GitArgs(work_, args));
}

std::string UpstreamRepo::GitBare(const std::vector<std::string>& args) const {
  return MustRun(GitArgs(bare_, args));
}

std::string UpstreamRepo::Commit(const std::map<std::string, std::string>& files,
                                 const std::string& message, const std::string& branch,
                                 const std::vector<std::string>& commit_args) {
  const std::string current = RunCommand(GitArgs(work_, {"symbolic-ref", "--short", "HEAD"})).out;
  if (current.substr(0, current.find('\n')) != branch) {
    if (RunCommand(GitArgs(work_, {"rev-parse", "--verify", "--quiet", branch})).exit_code == 0) {
      Git({"checkout", "--quiet", branch});
    } else {
      Git({"checkout", "--quiet", "-b", branch});
    }
  }
  for (const auto& [path, content] : files) WriteFile(work_ / path, content);
  Git({"add", "--all"});
  std::vector<std::string> args = {"commit", "--quiet", "--allow-empty", "-m", message};
  args.insert(args.end(), commit_args.begin(), commit_args.end());
  Git(args);
  Git({"push", "--quiet", "origin", branch});
  return Git({"rev-parse", "HEAD"});
}

std::string UpstreamRepo::Tip(const std::string& branch) const {
  ProcessResult r =
      RunCommand(GitArgs(bare_, {"rev-parse", "--verify", "--quiet", "refs/heads/" + branch}));
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.exit_code == 0 ? r.out : "";
}

void UpstreamRepo::FastImport(const std::string& stream) const {
  RunOptions options;
  options.input = stream;
  MustRun(GitArgs(bare_, {"fast-import", "--quiet", "--force"}), options);
}

}  // namespace tr::gitsource::testing
