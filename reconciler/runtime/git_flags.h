// The Git source settings `run` and `status` share (flags --repo and --git-*), registered by
// AddGitFlags, and their checks.
//
// Values only; thread-compatible.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "gitsource/config.h"

namespace tr::reconciler {

struct GitFlags {
  gitsource::GitSourceConfig git;  // repository URL, branch, auth, limits; mirror in state dir
  std::filesystem::path ca_file;   // --git-ca-file: replaces the system CA bundle for HTTPS
};

// Registers the Git source flags (--repo, --git-*, the snapshot and preview budgets) with their
// environment variables.
void AddGitFlags(CLI::App& cmd, GitFlags& flags);

// Credential, CA and allowed-signers files readable, no secret over plain http:// unless
// allowed, limits in range. InvalidArgument naming the flag.
absl::Status FinishGitFlags(const GitFlags& flags);

// The libgit2 settings the flags ask for (libgit2's CA bundle is process-wide).
gitsource::Libgit2Settings Libgit2SettingsOf(const GitFlags& flags);

// "host:port" with a port from 0 (any free port) to 65535. InvalidArgument naming `setting`.
absl::Status CheckListenAddress(std::string_view setting, const std::string& address);

}  // namespace tr::reconciler
