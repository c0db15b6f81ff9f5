// Test support: an upstream repository (bare, as a server holds it) with a work clone to
// author commits in, using the real git command line.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace tr::gitsource::testing {

class UpstreamRepo {
 public:
  // Creates <root>/<name>.git (bare, default branch main, pushes over HTTP allowed) and a
  // work clone <root>/<name>-work.
  UpstreamRepo(const std::filesystem::path& root, const std::string& name);

  const std::filesystem::path& bare() const { return bare_; }
  const std::filesystem::path& work() const { return work_; }

  // Runs git in the work clone / the bare repository; returns stdout.
  std::string Git(const std::vector<std::string>& args) const;
  std::string GitBare(const std::vector<std::string>& args) const;

  // Writes `files` (path -> content) into the work tree, commits on `branch` (created from
  // the current HEAD when new) and pushes it. `commit_args` go to `git commit` (e.g. -S).
  // Returns the new commit id.
  std::string Commit(const std::map<std::string, std::string>& files, const std::string& message,
                     const std::string& branch = "main",
                     const std::vector<std::string>& commit_args = {});

  // The branch's commit id in the bare repository; empty when it does not exist.
  std::string Tip(const std::string& branch) const;

  // Feeds a `git fast-import` stream into the bare repository.
  void FastImport(const std::string& stream) const;

 private:
  std::filesystem::path bare_;
  std::filesystem::path work_;
};

}  // namespace tr::gitsource::testing
