// Test support: `talos-reconciler run`'s flags parsed as the binary parses them (the --config
// file, then the environment and the command line), in a temporary directory of the test's own
// that holds the paths `run` requires. Header-only; the test binary links the reconciler.
//
// Thread-compatible: one test owns a fixture.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "reconciler/app/daemon/daemon_config.h"

namespace tr::test_support {

class RunFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("tr-run-flags-" + std::string(info->test_suite_name()) + "-" +
            std::to_string(::getpid()));
    std::filesystem::create_directories(dir_ / "creds");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Parses `args` after "run"; returns the CLI error text, or "" and fills `config`.
  std::string Parse(std::vector<std::string> args, reconciler::DaemonConfig& config) {
    CLI::App app;
    CLI::App* run = app.add_subcommand("run");
    reconciler::AddDaemonFlags(*run, config);
    if (absl::Status s = reconciler::ApplyConfigFile(args, *run); !s.ok()) {
      return std::string(s.message());
    }
    args.insert(args.begin(), "run");
    std::reverse(args.begin(), args.end());
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return e.what();
    }
    return "";
  }

  // The flags `run` requires: --repo, --credentials-dir and --state-dir (under dir_).
  std::vector<std::string> Required() const {
    return {"--repo",      "file:///r.git",          "--credentials-dir", (dir_ / "creds").string(),
            "--state-dir", (dir_ / "state").string()};
  }

  std::filesystem::path dir_;
};

}  // namespace tr::test_support
