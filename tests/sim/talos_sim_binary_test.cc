// talos-sim as a separate process: the ready output and file, the control endpoint, SIGTERM.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "nlohmann/json.hpp"

extern char** environ;

namespace tr::sim {
namespace {

using nlohmann::json;

constexpr const char* kBinaryFleet = R"(
time_scale: 0.002
clusters:
  - name: edge
    nodes:
      - {name: e-cp, role: controlplane, talos: v1.12.5, kubernetes: 1.35.0}
      - {name: e-w, role: worker, talos: v1.12.5, kubernetes: 1.35.0}
)";

class TalosSimProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sim-bin-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "fleet.yaml") << kBinaryFleet;
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ != nullptr) fclose(out_);
    std::filesystem::remove_all(dir_);
  }
  // Starts talos-sim with stdout on a pipe; returns its lines up to "ready ...".
  std::vector<std::string> Start() {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    const std::string binary = std::string(TR_BINARY_DIR) + "/tests/sim/talos-sim";
    const std::string fleet = (dir_ / "fleet.yaml").string();
    const std::string state = (dir_ / "state").string();
    std::vector<std::string> args = {binary, "--fleet", fleet, "--state-dir", state};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    EXPECT_EQ(posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    out_ = fdopen(fds[0], "r");
    std::vector<std::string> lines;
    char buf[1024];
    while (fgets(buf, sizeof buf, out_) != nullptr) {
      lines.emplace_back(buf);
      if (lines.back().rfind("ready ", 0) == 0) break;
    }
    return lines;
  }

  std::filesystem::path dir_;
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
};

TEST_F(TalosSimProcess, ServesUntilSigterm) {
  auto lines = Start();
  ASSERT_FALSE(lines.empty());
  ASSERT_EQ(lines.back().rfind("ready ", 0), 0u) << lines.back();
  std::ifstream ready_file(dir_ / "state" / "ready.json");
  json ready = json::parse(ready_file);
  ASSERT_EQ(ready["clusters"].size(), 1u);
  EXPECT_EQ(ready["clusters"][0]["nodes"][0]["name"], "e-cp");
  EXPECT_TRUE(std::filesystem::exists(
      ready["clusters"][0]["talosconfigs"]["os:reader"].get<std::string>()));
  const std::string control = ready["control_url"];
  httplib::Client client(control);
  auto node = client.Get("/v1/nodes/e-w");
  ASSERT_TRUE(node);
  EXPECT_EQ(json::parse(node->body)["talos_tag"], "v1.12.5");
  auto injected = client.Post("/v1/nodes/e-w/faults", R"({"kind":"slow_reboot","delay":"5s"})",
                              "application/json");
  ASSERT_TRUE(injected);
  EXPECT_EQ(injected->status, 200);
  EXPECT_EQ(json::parse(injected->body)["faults"][0]["kind"], "slow_reboot");
  auto bad = client.Post("/v1/nodes/e-w/faults", R"({"kind":"meteor"})", "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  auto cleared = client.Delete("/v1/nodes/e-w/faults?kind=slow_reboot");
  ASSERT_TRUE(cleared);
  EXPECT_TRUE(json::parse(cleared->body)["faults"].empty());
  auto missing = client.Get("/v1/nodes/ghost");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  auto journal = client.Get("/v1/journal?since=0");
  ASSERT_TRUE(journal);
  EXPECT_FALSE(json::parse(journal->body).empty());

  // The Image Factory: printed, in ready.json, its faults and releases set through the control
  // endpoint.
  const std::string factory_url = ready["factory_url"];
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [&](const std::string& line) {
    return line.rfind("factory " + factory_url, 0) == 0;
  }));
  httplib::Client factory(factory_url);
  auto versions = factory.Get("/versions");
  ASSERT_TRUE(versions);
  EXPECT_EQ(versions->status, 200);
  auto failing =
      client.Post("/v1/factory/faults", R"({"kind":"internal_error"})", "application/json");
  ASSERT_TRUE(failing);
  EXPECT_EQ(failing->status, 200);
  EXPECT_EQ(factory.Get("/versions")->status, 500);
  auto unknown_fault =
      client.Post("/v1/factory/faults", R"({"kind":"meteor"})", "application/json");
  ASSERT_TRUE(unknown_fault);
  EXPECT_EQ(unknown_fault->status, 400);
  auto slow =
      client.Post("/v1/factory/faults", R"({"kind":"slow","delay":"5s"})", "application/json");
  ASSERT_TRUE(slow);
  EXPECT_EQ(json::parse(slow->body)["faults"]["delay_ms"], 5000);
  auto cleared_factory = client.Delete("/v1/factory/faults");
  ASSERT_TRUE(cleared_factory);
  EXPECT_EQ(json::parse(cleared_factory->body)["faults"]["delay_ms"], 0);
  auto release =
      client.Post("/v1/factory/versions", R"({"version":"v1.99.0"})", "application/json");
  ASSERT_TRUE(release);
  EXPECT_EQ(release->status, 200);
  auto listed = factory.Get("/versions");
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->status, 200);
  EXPECT_EQ(json::parse(listed->body).back(), "v1.99.0");

  ASSERT_EQ(kill(pid_, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid_, &status, 0), pid_);
  pid_ = -1;
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(TalosSimProcess, RejectsABadFleetFile) {
  std::ofstream(dir_ / "fleet.yaml") << "clusters: []\n";
  auto lines = Start();
  int status = 0;
  ASSERT_EQ(waitpid(pid_, &status, 0), pid_);
  pid_ = -1;
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

}  // namespace
}  // namespace tr::sim
