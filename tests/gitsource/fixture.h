// Test support: the fixture most gitsource tests share. An upstream profile repository
// with one commit on `main`, a state directory for the mirror, and the check every test
// ends with: the desired-state branch is exactly where the test itself last put it.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>

#include "gitsource/git_source.h"
#include "tests/support/process.h"
#include "tests/support/repos.h"

namespace tr::gitsource::testing {

inline constexpr char kProdProfile[] =
    "apiVersion: talos-reconciler.dev/v1alpha1\nkind: ClusterProfile\nmetadata:\n  name: prod\n";
inline constexpr char kDefaults[] = "apiVersion: talos-reconciler.dev/v1alpha1\nkind: Defaults\n";

// `size` bytes that do not compress (a linear congruential sequence from `seed`): a blob whose
// pack is as large as the blob.
inline std::string IncompressibleBytes(std::size_t size, unsigned seed) {
  std::string bytes(size, '\0');
  for (char& c : bytes) {
    seed = seed * 1103515245u + 12345u;
    c = static_cast<char>(seed >> 16);
  }
  return bytes;
}

class UpstreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    desired_tip_ = upstream_.Commit(
        {{"clusters/prod.yaml", kProdProfile}, {"reconciler.yaml", kDefaults}}, "initial");
  }

  void TearDown() override {
    EXPECT_EQ(upstream_.Tip("main"), desired_tip_) << "the desired-state branch was changed";
  }

  // Commits on the desired branch as a user would, and remembers the new tip.
  std::string CommitDesired(const std::map<std::string, std::string>& files,
                            const std::string& message) {
    desired_tip_ = upstream_.Commit(files, message);
    return desired_tip_;
  }

  GitSourceConfig Config(const std::string& url) const {
    GitSourceConfig config;
    config.remote.url = url;
    config.remote.limits.operation_timeout = std::chrono::seconds(20);
    config.state_dir = tmp_ / "state";
    return config;
  }

  std::unique_ptr<LibGitSource> OpenSource(const GitSourceConfig& config) const {
    absl::StatusOr<std::unique_ptr<LibGitSource>> source =
        LibGitSource::Open(config, Env::Default());
    EXPECT_TRUE(source.ok()) << source.status();
    return source.ok() ? *std::move(source) : nullptr;
  }

  TempDir tmp_;
  std::filesystem::path served_ = tmp_ / "served";
  UpstreamRepo upstream_{served_, "profiles"};
  std::string desired_tip_;
};

}  // namespace tr::gitsource::testing
