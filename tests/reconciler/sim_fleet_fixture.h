// A test's own scratch directory, and the fixture of the tests that run a talos-sim fleet in
// one: `dir_` holds an empty repo/clusters and the fleet a test starts (each cluster's
// talosconfig under sim/<cluster>/); both are gone at the end.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "tests/sim/fleet.h"

namespace tr::reconciler {

// <temp>/<prefix>-<test name>-<pid>: tests of one binary run at once, and runs of it too.
inline std::filesystem::path PerTestDir(std::string_view prefix) {
  return std::filesystem::temp_directory_path() /
         (std::string(prefix) + "-" +
          testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
          std::to_string(::getpid()));
}

class SimFleetFixture : public testing::Test {
 protected:
  explicit SimFleetFixture(std::string prefix) : prefix_(std::move(prefix)) {}

  void SetUp() override {
    dir_ = PerTestDir(prefix_);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "repo/clusters");
  }
  void TearDown() override {
    if (fleet_) fleet_->Stop();
    std::filesystem::remove_all(dir_);
  }
  void StartFleet(const char* yaml) {
    absl::StatusOr<sim::FleetSpec> spec = sim::FleetSpec::Parse(yaml);
    ASSERT_TRUE(spec.ok()) << spec.status();
    absl::StatusOr<std::unique_ptr<sim::Fleet>> fleet = sim::Fleet::Start(*spec, dir_ / "sim");
    ASSERT_TRUE(fleet.ok()) << fleet.status();
    fleet_ = *std::move(fleet);
  }

  std::filesystem::path dir_;
  std::unique_ptr<sim::Fleet> fleet_;

 private:
  std::string prefix_;
};

}  // namespace tr::reconciler
