// A fake forge over real HTTP on loopback, for the tests of the forge clients and of the pull
// request flow. It answers the REST calls the reconciler makes as GitHub, GitLab or Gitea do
// (paths below /api/v3, /api/v4 and /api/v1, as self-hosted instances serve them), keeps the
// comments, commit statuses and pull requests it was sent, and can answer the next requests
// with a rate limit. Every request is checked: against GitHub's official REST description
// (GithubOpenApi) for GitHub, against the documented shapes of the other two; a request that
// does not conform is answered 422 and fails the test when the fake is destroyed.
//
// Thread-safe: the server thread and the test read and write under one lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/env.h"
#include "tests/support/wait.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace tr::forge_test {

struct FakeComment {
  int64_t id = 0;
  int64_t pull_request = 0;
  std::string body;
  int edits = 0;
};

struct FakeStatus {
  std::string sha;
  std::string context;  // GitLab's `name`
  std::string state;
  std::string description;
  std::string target_url;
};

// A pull (merge) request the fake keeps: opened through the API, or added by the test.
struct FakePull {
  int64_t number = 0;
  std::string state;  // "open", "closed" or "merged"
  std::string title;
  std::string body;
  std::string head;  // branch
  std::string base;
  std::vector<std::string> labels;  // names
  int edits = 0;
  bool from_fork = false;   // its head branch is a fork's, not the repository's
  Env::TimePoint opened{};  // when the forge received it
};

struct FakeResponse {
  int status = 403;
  std::map<std::string, std::string> headers;
  std::string body;
};

class FakeForge {
 public:
  // `forge`: "github", "gitlab" or "gitea"; requests must carry `token` and name `repository`.
  FakeForge(std::string forge, std::string repository, std::string token);
  ~FakeForge();  // fails the test for every request that did not conform
  FakeForge(const FakeForge&) = delete;
  FakeForge& operator=(const FakeForge&) = delete;

  // What --forge-api-url is for this fake: http://127.0.0.1:<port>/api/v3 (v4, v1).
  std::string api_url() const;

  // The next `count` requests get `response` instead of being served (a rate limit).
  void Inject(FakeResponse response, int count = 1);
  // Answers "which pull requests hold commit `sha`" with pull request `number`, merged.
  void SetMergedPull(const std::string& sha, int64_t number);
  // Adds a comment someone else wrote (so finding by marker has something to skip).
  void AddForeignComment(int64_t pull_request, const std::string& body);

  // Adds a pull request someone else opened from `head` (of a fork when `from_fork`) into
  // main; its number.
  int64_t AddForeignPull(const std::string& head, bool from_fork = false);
  // Defines a label of the repository (Gitea applies labels by id); its id.
  int64_t DefineLabel(const std::string& name);
  // Closes pull request `number` without merging, or marks it merged.
  void ClosePull(int64_t number);
  void MarkPullMerged(int64_t number);
  // Every pull request, oldest first.
  std::vector<FakePull> Pulls() const;

  std::vector<FakeComment> Comments(int64_t pull_request) const;
  std::vector<FakeStatus> Statuses(const std::string& sha) const;
  // "POST /repos/o/r/statuses/abc" for every request served or refused, in order.
  std::vector<std::string> Requests() const;
  std::vector<std::string> Violations() const;
  // True once `done()` (which reads this fake) holds, checked now and after each request
  // served; false when `within` passes first. Waits on the requests, not by polling.
  bool WaitFor(std::chrono::milliseconds within, const std::function<bool()>& done) const;
  // How many injected responses are still to be sent.
  size_t InjectedLeft() const;
  // Every raw header value and body it was sent, for leak checks.
  std::string Transcript() const;

 private:
  void Handle(const httplib::Request& req, httplib::Response& res);
  std::vector<std::string> CheckShape(const httplib::Request& req, const std::string& path) const;
  void Serve(const std::string& method, const std::string& path, const std::string& body, int page,
             httplib::Response& res);
  // Serves the pull request and label calls; false when `path` is none of them.
  bool ServePulls(const httplib::Request& req, const std::string& path, httplib::Response& res);
  std::string ListPulls(const httplib::Request& req) const;
  std::string PullJson(const FakePull& pull) const;
  FakePull* FindPull(int64_t number);

  const std::string forge_, repository_, token_, prefix_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::thread thread_;
  test_support::Changes served_;  // a request was answered
  mutable std::mutex mu_;
  std::vector<FakeComment> comments_;
  std::vector<FakeStatus> statuses_;
  std::map<std::string, int64_t> merged_pulls_;
  std::vector<std::string> requests_, violations_;
  std::string transcript_;
  std::vector<FakeResponse> injected_;
  int64_t next_id_ = 1000;
  std::vector<FakePull> pulls_;
  std::vector<std::pair<int64_t, std::string>> labels_;  // id, name
  // Above the pull request numbers other tests use (7, 12, 99 and the soak bench's, counting
  // up from 1), so a test never finds a pull request it did not mean.
  int64_t next_pull_ = 100'001;
};

}  // namespace tr::forge_test
