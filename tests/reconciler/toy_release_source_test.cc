// A release source added as docs/architecture.md says ("Where a new health-check type or
// release source goes"): one class returning versions and one registration line, used through
// the daemon's real registry of sources and the one release cache.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "reconciler/app/daemon/release_sources.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler {
namespace {

core::Version V(int major, int minor, int patch) { return {major, minor, patch, "", 0, "", false}; }

// Answers two releases and one broken one the first time, and is down after that.
class ToyReleaseSource final : public releases::ReleaseSource {
 public:
  absl::StatusOr<releases::ReleaseList> List(std::stop_token /*stop*/) override {
    if (++calls_ > 1) return absl::UnavailableError("the toy source is down");
    return releases::ReleaseList{
        .releases = {V(1, 12, 3), V(1, 13, 0)}, .broken = {V(1, 12, 2)}, .listed = 3};
  }

 private:
  std::atomic<int> calls_{0};
};

// The one registration line: --toy-releases, tried after the built-in sources.
const bool kToyRegistered = [] {
  RegisterReleaseSource({"--toy-releases", [](const DaemonConfig&) {
                           return OpenedReleaseSource{std::make_unique<ToyReleaseSource>(),
                                                      std::chrono::hours(1)};
                         }});
  return true;
}();

// Neither built-in source's flag set.
DaemonConfig WithoutBuiltInSources() {
  DaemonConfig config;
  config.installer_registry.reset();
  config.image_factory.origin.clear();
  return config;
}

TEST(ToyReleaseSourceTest, ServesThroughTheRegistryAndTheCacheKeepsItsLastList) {
  ASSERT_TRUE(kToyRegistered);
  test_support::SimulatedEnv env;
  std::unique_ptr<releases::ReleaseCache> cache = OpenReleaseCache(WithoutBuiltInSources(), env);
  ASSERT_NE(cache, nullptr);
  EXPECT_TRUE(cache->Known().empty());
  ASSERT_TRUE(cache->Refresh({}).ok());
  EXPECT_EQ(cache->Known(), (std::vector<core::Version>{V(1, 12, 3), V(1, 13, 0)}));
  EXPECT_EQ(cache->Broken(), (std::vector<core::Version>{V(1, 12, 2)}));
  // Down: the last good list stays.
  EXPECT_EQ(cache->Refresh({}).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(cache->Known(), (std::vector<core::Version>{V(1, 12, 3), V(1, 13, 0)}));
  EXPECT_EQ(cache->Broken(), (std::vector<core::Version>{V(1, 12, 2)}));
}

// A built-in source whose flag is set comes first: --installer-registry serves, not the toy
// (nothing listens on port 1, so its listing fails instead of answering the toy's releases).
TEST(ToyReleaseSourceTest, ABuiltInSourceWhoseFlagIsSetComesFirst) {
  ASSERT_TRUE(kToyRegistered);
  test_support::SimulatedEnv env;
  DaemonConfig config = WithoutBuiltInSources();
  registry::InstallerRegistryOptions registry;
  registry.origin = "http://127.0.0.1:1";
  registry.repository = "siderolabs/installer";
  config.installer_registry = registry;
  std::unique_ptr<releases::ReleaseCache> cache = OpenReleaseCache(config, env);
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->Refresh({}).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(cache->Known().empty());
}

// Answers the lists it is given, one per call; an empty optional is an outage.
class ScriptedReleaseSource final : public releases::ReleaseSource {
 public:
  explicit ScriptedReleaseSource(std::vector<std::optional<releases::ReleaseList>> answers)
      : answers_(std::move(answers)) {}
  absl::StatusOr<releases::ReleaseList> List(std::stop_token /*stop*/) override {
    const std::optional<releases::ReleaseList>& answer = answers_.at(calls_++);
    if (!answer) return absl::UnavailableError("the scripted source is down");
    return *answer;
  }

 private:
  std::vector<std::optional<releases::ReleaseList>> answers_;
  size_t calls_ = 0;
};

// The daemon reconciles every cluster when a list changes: Run says so after the first list,
// after a release is marked broken, and not for the same list again or for an outage. An
// outage is asked again after kFirstRetry, then twice that, not after the TTL.
TEST(ReleaseCacheTest, RunSaysWhenTheKnownOrBrokenReleasesChanged) {
  const releases::ReleaseList two{.releases = {V(1, 12, 3), V(1, 13, 0)}, .broken = {}, .listed = 2};
  releases::ReleaseList one_broken = two;
  one_broken.broken = {V(1, 12, 2)};
  test_support::SimulatedEnv env;
  env.sleep_budget = 6;  // six refreshes
  releases::ReleaseCache cache(std::make_unique<ScriptedReleaseSource>(
                                   std::vector<std::optional<releases::ReleaseList>>{
                                       two, two, one_broken, std::nullopt, std::nullopt, one_broken}),
                               std::chrono::minutes(10), env);
  std::vector<std::vector<core::Version>> broken_when_changed;
  cache.Run({}, [&] { broken_when_changed.push_back(cache.Broken()); });
  EXPECT_EQ(broken_when_changed,
            (std::vector<std::vector<core::Version>>{{}, {V(1, 12, 2)}}));
  using std::chrono::milliseconds;
  const milliseconds ttl = std::chrono::minutes(10);
  const milliseconds retry = releases::ReleaseCache::kFirstRetry;
  EXPECT_EQ(env.slept, (std::vector<milliseconds>{ttl, ttl, ttl, retry, 2 * retry, ttl}));
}

}  // namespace
}  // namespace tr::reconciler
