// One comment per pull request, kept up to date in place: the reconciler's plan, then the
// rollout's progress and result. The comment carries a hidden marker line; the first write
// finds a comment with the marker (after a restart) or creates one, later writes edit it.
// Writes are coalesced: at most one edit per pull request per `min_edit_interval`, the latest
// body winning, so a busy rollout cannot spend the forge's rate limit.
// Memory is bounded: at most `max_comments` pull requests are remembered (their comment id and
// bodies). Past that the one published to least recently and already written is forgotten; its
// next body finds the comment again by its marker (one more read, never a second comment). A
// body not yet written is forgotten only when every remembered one is unwritten (the forge has
// been down through that many pull requests), and that is logged.
//
// Thread-safe. Publish() returns at once; a background thread writes. A failed write is
// retried after `min_edit_interval` (the client already retried the transient failures).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "reconciler/clients/forge/forge_client.h"

namespace tr::reconciler::pull_requests {

// The hidden line that marks the reconciler's comment (an HTML comment: not rendered).
inline constexpr char kCommentMarker[] = "<!-- talos-reconciler:pull-request-comment -->";
// Pull requests whose comment is remembered by default: the open ones of a busy repository.
inline constexpr size_t kMaxRememberedComments = 512;

class PullRequestComments {
 public:
  PullRequestComments(forge::ForgeApi& api, std::chrono::milliseconds min_edit_interval, Env& env,
                      size_t max_comments = kMaxRememberedComments);
  ~PullRequestComments();  // stops the writer; unwritten bodies are dropped
  PullRequestComments(const PullRequestComments&) = delete;
  PullRequestComments& operator=(const PullRequestComments&) = delete;

  // Makes `body` (the marker is added in front) the comment of pull request `number`.
  void Publish(int64_t number, std::string body);

  // Whether every published body was written (for tests and an orderly stop).
  bool Idle();
  // How many pull requests' comments are remembered now (at most `max_comments`).
  size_t Remembered();

 private:
  struct Comment {
    std::optional<int64_t> id;
    std::string wanted;   // the body to show, marker included
    std::string written;  // the body last written
    Env::TimePoint next_write{};
    uint64_t published = 0;  // published_ at its last Publish: the least recent goes first
  };

  void Run(std::stop_token stop);
  // Writes one comment's wanted body: find-or-create, or edit. Called without mu_ held.
  absl::Status Write(int64_t number, std::optional<int64_t>& id, const std::string& body,
                     std::stop_token stop);
  // Forgets pull requests beyond max_comments_ (see the class comment); never the one being
  // written.
  void Trim() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  forge::ForgeApi& api_;
  const std::chrono::milliseconds min_edit_interval_;
  Env& env_;
  const size_t max_comments_;
  Mutex mu_;
  std::condition_variable_any cv_;
  std::map<int64_t, Comment> comments_ ABSL_GUARDED_BY(mu_);
  int writing_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<int64_t> in_flight_ ABSL_GUARDED_BY(mu_);  // the pull request being written
  uint64_t published_ ABSL_GUARDED_BY(mu_) = 0;  // wakes the writer
  std::jthread thread_;                          // last: stops before the members it uses go
};

}  // namespace tr::reconciler::pull_requests
