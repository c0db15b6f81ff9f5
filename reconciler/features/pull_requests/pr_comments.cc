#include "reconciler/features/pull_requests/pr_comments.h"

#include <algorithm>

#include "base/thread_name.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler::pull_requests {

using forge::ForgeApi;
using forge::ForgeComment;

PullRequestComments::PullRequestComments(ForgeApi& api, std::chrono::milliseconds min_edit_interval,
                                         Env& env, size_t max_comments)
    : api_(api),
      min_edit_interval_(min_edit_interval),
      env_(env),
      max_comments_(std::max<size_t>(max_comments, 1)),
      thread_([this](std::stop_token stop) {
        NameThisThread("pr-comments");
        Run(stop);
      }) {}

PullRequestComments::~PullRequestComments() {
  thread_.request_stop();
  cv_.notify_all();
}

void PullRequestComments::Publish(int64_t number, std::string body) {
  {
    MutexLock lock(mu_);
    Comment& comment = comments_[number];
    comment.wanted = std::string(kCommentMarker) + "\n" + std::move(body);
    comment.published = ++published_;
    Trim();
  }
  cv_.notify_all();
}

bool PullRequestComments::Idle() {
  MutexLock lock(mu_);
  if (writing_ > 0) return false;
  for (const auto& [number, comment] : comments_) {
    if (comment.wanted != comment.written) return false;
  }
  return true;
}

size_t PullRequestComments::Remembered() {
  MutexLock lock(mu_);
  return comments_.size();
}

void PullRequestComments::Trim() {
  while (comments_.size() > max_comments_) {
    // The least recently published, preferring one already written.
    auto victim = comments_.end();
    for (auto it = comments_.begin(); it != comments_.end(); ++it) {
      if (it->first == in_flight_) continue;
      const bool written = it->second.wanted == it->second.written;
      if (victim == comments_.end()) {
        victim = it;
        continue;
      }
      const bool victim_written = victim->second.wanted == victim->second.written;
      if (written != victim_written ? written
                                    : it->second.published < victim->second.published) {
        victim = it;
      }
    }
    if (victim == comments_.end()) return;
    if (victim->second.wanted != victim->second.written) {
      ModuleLogger("forge")->warn(
          "step=pull-request-comment pull-request={} outcome=dropped reason=\"too many unwritten\"",
          victim->first);
    }
    comments_.erase(victim);
  }
}

absl::Status PullRequestComments::Write(int64_t number, std::optional<int64_t>& id,
                                        const std::string& body, std::stop_token stop) {
  if (!id) {
    absl::StatusOr<std::optional<ForgeComment>> found =
        api_.FindComment(number, kCommentMarker, stop);
    if (!found.ok()) return found.status();
    if (*found) id = (*found)->id;
  }
  if (id) return api_.EditComment(number, *id, body, stop);
  absl::StatusOr<int64_t> created = api_.CreateComment(number, body, stop);
  if (!created.ok()) return created.status();
  id = *created;
  return absl::OkStatus();
}

void PullRequestComments::Run(std::stop_token stop) {
  auto log = ModuleLogger("forge");
  MutexLock lock(mu_);
  while (!stop.stop_requested()) {
    // The due comment with the earliest turn; else sleep until one is due or published.
    std::optional<int64_t> due;
    Env::TimePoint wake = Env::TimePoint::max();
    const Env::TimePoint now = env_.Now();
    for (const auto& [number, comment] : comments_) {
      if (comment.wanted == comment.written) continue;
      if (comment.next_write <= now) {
        due = number;
        break;
      }
      wake = std::min(wake, comment.next_write);
    }
    if (!due) {
      const uint64_t seen = published_;
      auto published = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return published_ != seen; };
      if (wake == Env::TimePoint::max()) {
        env_.Wait(cv_, lock, stop, Env::kNoDeadline, published);
      } else {
        env_.WaitFor(cv_, lock, stop, wake - now, published);
      }
      continue;
    }
    Comment& comment = comments_[*due];
    const std::string body = comment.wanted;
    std::optional<int64_t> id = comment.id;
    comment.next_write = now + min_edit_interval_;
    ++writing_;
    in_flight_ = due;
    lock.unlock();
    const absl::Status written = Write(*due, id, body, stop);
    lock.lock();
    --writing_;
    in_flight_.reset();
    Comment& after = comments_[*due];  // never trimmed while in flight
    after.id = id;
    if (written.ok()) {
      after.written = body;
      Trim();  // a Publish while it was in flight may have left one too many
    } else {
      log->warn("step=pull-request-comment pull-request={} error={}", *due,
                LogValue(std::string(written.message())));
    }
  }
}

}  // namespace tr::reconciler::pull_requests
