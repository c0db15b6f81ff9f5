// Shared by the tests of tests/forge: where the npm test tools are (installed by
// tests/forge/setup), running the independent webhook sender, and raw loopback sockets.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/env.h"
#include "nlohmann/json.hpp"
#include "reconciler/clients/forge/forge_client.h"
#include "tests/support/fake_forge.h"
#include "tests/support/simulated_env.h"

namespace tr::forge_test {

// .cache/forge-npm/node_modules of the source tree; fails the test (with the command to run)
// when tests/forge/setup has not installed it.
std::string NodeModules();

// tests/forge/payloads/<name>.
std::string PayloadPath(const std::string& name);

// Runs tests/forge/send_webhooks.mjs against `base_url` and returns its JSON lines.
std::vector<nlohmann::json> SendWebhooks(const std::string& base_url, const std::string& secret,
                                         const std::string& forge, const std::string& event,
                                         const std::string& source, int repeat = 1);

// Connects to 127.0.0.1:`port`; -1 on failure.
int ConnectLoopback(int port);
// The same from `source`, another loopback address (127.0.0.2, …): another peer.
int ConnectLoopbackFrom(const char* source, int port);
// Sends all of `data` (no SIGPIPE); false when the peer went away.
bool SendAll(int fd, const std::string& data);
// Reads until the peer closes or `deadline` passes; nullopt on timeout.
std::optional<std::string> ReadUntilClosed(int fd, Env::TimePoint deadline);

// Time that moves only when the client sleeps: the sleeps are recorded (`slept`), not waited.
// Simulated time from a fixed moment, its jitter at the middle.
class RecordingTime final : public test_support::SimulatedEnv {
 public:
  RecordingTime() : SimulatedEnv(TimePoint(std::chrono::seconds(1'800'000'000))) {
    uniforms = {0.5};
  }
};

// A client of `fake` for the repository acme/fleet, speaking `forge`, with `token`; its waits
// go to `time`. Fails the test (and returns null) when it cannot be made.
std::unique_ptr<reconciler::forge::HttpForgeClient> FakeForgeClient(const FakeForge& fake,
                                                                    const std::string& forge,
                                                                    const std::string& token,
                                                                    RecordingTime& time,
                                                                    int per_minute = 40);

}  // namespace tr::forge_test
