// The settings of the forge's API (`--forge*`): registered and checked here, used by the
// daemon's wiring (reconciler/app/daemon/forge_wiring).
//
// Values only; thread-compatible.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"

namespace tr::reconciler::forge {

struct ForgeFlags {
  std::string kind;     // --forge: a dialect with an API (FindApiDialect); empty: none
  std::string api_url;  // empty: the dialect's default (GitHub's public API; else required)
  std::filesystem::path token_file;
  std::string repository;            // "owner/name"; empty: the path of --repo
  bool allow_insecure_http = false;  // an http:// API URL, the token in clear (tests)
  std::chrono::milliseconds comment_interval{10'000};  // at most one edit per PR per this

  void AddFlags(CLI::App& cmd);
  // With --forge: a known forge, an API URL (the dialect's default if any; https unless
  // --forge-allow-insecure-http), a readable token file and a repository path (from
  // `repo_url`, the --repo URL, when not given). InvalidArgument naming the flag.
  absl::Status Finish(const std::string& repo_url);
};

}  // namespace tr::reconciler::forge
