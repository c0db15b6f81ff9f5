// Stand-ins a PullRequestFlow needs beside the fake forge, for tests that only send merged
// webhooks and records: the status branch as a map, a Git source that fetches nothing, and a
// forge client of the fake.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "gitsource/git_source.h"
#include "reconciler/clients/forge/forge_client.h"
#include "reconciler/loop/status_store.h"
#include "tests/support/fake_forge.h"

namespace tr::reconciler::pull_requests {

// The status branch every reporter records to and reads back.
class SharedBranch final : public StatusStore {
 public:
  absl::StatusOr<std::map<std::string, core::ClusterStatus>> LoadAll(std::stop_token) override {
    std::lock_guard lock(mu_);
    return statuses_;
  }
  absl::Status Record(const core::ClusterStatus& status, std::stop_token) override {
    std::lock_guard lock(mu_);
    statuses_[status.cluster] = status;
    return absl::OkStatus();
  }

 private:
  std::mutex mu_;
  std::map<std::string, core::ClusterStatus> statuses_;
};

// The pull requests' own content is never fetched: no test using it sends an opened webhook.
class NoPreviews final : public gitsource::GitSource, public gitsource::PreviewSource {
 public:
  absl::StatusOr<gitsource::RemoteHead> Poll(std::stop_token) override {
    return absl::UnimplementedError("not in this test");
  }
  absl::StatusOr<gitsource::ProfileSnapshot> Snapshot(std::string_view) override {
    return absl::UnimplementedError("not in this test");
  }
  absl::StatusOr<gitsource::ProfileSnapshot> FetchPreview(const std::string&,
                                                          std::stop_token) override {
    return absl::UnimplementedError("not in this test");
  }
  absl::Status DropPreview(const std::string&) override {
    return absl::UnimplementedError("not in this test");
  }
};

// A GitHub client of `fake` (repository acme/fleet) that never paces its requests.
inline std::unique_ptr<forge::HttpForgeClient> UnpacedClient(const forge_test::FakeForge& fake,
                                                             const std::string& token) {
  forge::ForgeClientOptions options;
  options.target = {forge::FindApiDialect("github"), "acme/fleet"};
  options.api_url = fake.api_url();
  options.token = token;
  options.content_requests_per_minute = 600'000;  // no pacing to wait out in a test
  return *forge::HttpForgeClient::Create(std::move(options), Env::Default());
}

}  // namespace tr::reconciler::pull_requests
