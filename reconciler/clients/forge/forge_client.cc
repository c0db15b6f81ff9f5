#include "reconciler/clients/forge/forge_client.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/http_client.h"
#include "base/http_outcome.h"
#include "httplib.h"
#include "reconciler/runtime/capped_request.h"
#include "reconciler/runtime/error_class.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler::forge {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using SystemTime = std::chrono::system_clock::time_point;

constexpr seconds kSecondaryLimitWait{60};  // GitHub: "wait at least one minute"
constexpr milliseconds kMaxWait = kMaxRateLimitWait;
// No answer or a 5xx: 1 s doubling to 32 s, jittered so that replicas which failed together do
// not retry together (max_attempts is the client's own).
constexpr BackoffPolicy kServerTroubleBackoff{seconds(1), seconds(32), 0};

std::optional<int64_t> Number(const std::map<std::string, std::string>& headers,
                              const std::string& name) {
  auto it = headers.find(name);
  int64_t value = 0;
  if (it == headers.end() || !absl::SimpleAtoi(it->second, &value)) return std::nullopt;
  return value;
}

bool MentionsRateLimit(std::string_view body) {
  std::string lower(body.substr(0, 4096));
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("rate limit") != std::string::npos;
}

std::map<std::string, std::string> LowerHeaders(const httplib::Headers& headers) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : headers) {
    std::string key = name;
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    out.emplace(std::move(key), value);
  }
  return out;
}

// The error an answer that is not a success stands for, by what the caller should do next
// (base/http_outcome.h): fix the configuration, or retry later. A 403 that is a rate limit
// (`rate_limited`: the forge's own way of saying so, read by RateLimitDelay) is
// ResourceExhausted, as a 429 is.
absl::Status ForgeError(const HttpOutcome& outcome, const ForgeRequest& request,
                        bool rate_limited) {
  const absl::StatusCode code = outcome.Code();
  const char* hint = code == absl::StatusCode::kUnauthenticated     ? " (check --forge-token-file)"
                     : code == absl::StatusCode::kPermissionDenied ? " (forbidden or rate-limited)"
                                                                   : "";
  const std::string message =
      absl::StrCat("forge ", request.method, " ", request.path, ": HTTP ", outcome.status, hint);
  if (rate_limited) return absl::ResourceExhaustedError(message);
  return outcome.Error(message);
}

}  // namespace

std::optional<milliseconds> RateLimitDelay(int status,
                                           const std::map<std::string, std::string>& headers,
                                           std::string_view body, SystemTime now, int retry) {
  const auto retry_after = headers.find("retry-after");
  const HttpOutcome outcome =
      HttpOutcome::Of(status, retry_after == headers.end() ? "" : retry_after->second);
  // A forge also answers a rate limit with 403 (GitHub's secondary limits).
  const bool forbidden = outcome.Code() == absl::StatusCode::kPermissionDenied;
  if (!outcome.RateLimited() && !forbidden) return std::nullopt;
  if (outcome.retry_after) return outcome.RetryAfterOr(milliseconds(0), kMaxWait);
  const std::optional<int64_t> remaining = Number(headers, "x-ratelimit-remaining");
  const std::optional<int64_t> reset = Number(headers, "x-ratelimit-reset");
  if (remaining == 0 && reset) {
    const std::optional<SystemTime> until = RateLimitedUntil(headers, now);
    const milliseconds wait =
        until ? std::chrono::duration_cast<milliseconds>(*until - now) : milliseconds(0);
    return std::clamp<milliseconds>(wait + seconds(1), seconds(1), kMaxWait);
  }
  // A 403 that names no limit is a permission problem, not a reason to wait.
  if (forbidden && !MentionsRateLimit(body)) return std::nullopt;
  return std::min<milliseconds>(kSecondaryLimitWait * (1 << std::min(retry - 1, 5)), kMaxWait);
}

std::optional<SystemTime> RateLimitedUntil(const std::map<std::string, std::string>& headers,
                                           SystemTime now) {
  const std::optional<int64_t> reset = Number(headers, "x-ratelimit-reset");
  if (Number(headers, "x-ratelimit-remaining") != 0 || !reset) return std::nullopt;
  // Compared in seconds since the epoch: a reset of 2^62 must not overflow a time_point.
  const int64_t now_s = std::chrono::duration_cast<seconds>(now.time_since_epoch()).count();
  if (*reset <= now_s) return std::nullopt;
  const int64_t max_s = std::chrono::duration_cast<seconds>(kMaxWait).count();
  if (*reset - now_s >= max_s) return now + kMaxWait;
  return SystemTime(seconds(*reset));
}

absl::StatusOr<std::unique_ptr<HttpForgeClient>> HttpForgeClient::Create(ForgeClientOptions options,
                                                                         Env& env) {
  const std::string& url = options.api_url;
  const size_t scheme_end = url.find("://");
  const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") {
    return absl::InvalidArgumentError("--forge-api-url must start with http:// or https://");
  }
  const size_t path_start = url.find('/', scheme_end + 3);
  std::string origin = url.substr(0, path_start);
  std::string prefix = path_start == std::string::npos ? "" : url.substr(path_start);
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (origin.size() <= scheme_end + 3)
    return absl::InvalidArgumentError("--forge-api-url has no host");
  if (options.token.empty()) return absl::InvalidArgumentError("the forge token is empty");
  if (options.target.repository.empty()) {
    return absl::InvalidArgumentError("the forge repository is empty");
  }
  if (options.target.dialect == nullptr) return absl::InvalidArgumentError("no forge dialect");
  return std::unique_ptr<HttpForgeClient>(
      new HttpForgeClient(std::move(options), std::move(origin), std::move(prefix), env));
}

HttpForgeClient::HttpForgeClient(ForgeClientOptions options, std::string origin, std::string prefix,
                                 Env& env)
    : options_(std::move(options)),
      origin_(std::move(origin)),
      prefix_(std::move(prefix)),
      env_(env) {}

bool HttpForgeClient::Pace(bool content_creating, std::stop_token stop) {
  for (;;) {
    milliseconds wait{0};
    {
      MutexLock lock(mu_);
      const SystemTime now = env_.Now();
      if (blocked_until_ > now) {
        wait = std::chrono::duration_cast<milliseconds>(blocked_until_ - now);
      } else if (content_creating) {
        while (!recent_content_.empty() &&
               now - recent_content_.front() >= std::chrono::minutes(1)) {
          recent_content_.pop_front();
        }
        if (static_cast<int>(recent_content_.size()) < options_.content_requests_per_minute) {
          recent_content_.push_back(now);
          return true;
        }
        wait = std::chrono::duration_cast<milliseconds>(recent_content_.front() +
                                                        std::chrono::minutes(1) - now);
      } else {
        return true;
      }
    }
    if (!env_.SleepFor(std::max(wait, milliseconds(1)), stop)) return false;
  }
}

absl::StatusOr<std::string> HttpForgeClient::Send(const ForgeRequest& request,
                                                  std::stop_token stop) {
  auto log = ModuleLogger("forge");
  httplib::Headers headers;
  for (auto& [name, value] : options_.target.dialect->AuthHeaders(options_.token)) {
    headers.emplace(name, value);
  }
  const std::string path = prefix_ + request.path;
  const std::string body = request.body ? request.body->dump() : "";
  for (int attempt = 1;; ++attempt) {
    if (!Pace(request.content_creating(), stop)) return absl::CancelledError("forge call stopped");
    const auto client = NewHttpClient(origin_, {options_.timeout, options_.timeout, {}});
    CappedAnswer answer =
        SendCapped(*client, MakeRequest(request.method, path, headers, body, "application/json"),
                   options_.max_answer_bytes);
    if (answer.over_cap) {
      return AnswerOverCap(absl::StrCat("forge ", request.method, " ", request.path),
                           options_.max_answer_bytes);
    }
    httplib::Result& res = answer.result;
    std::optional<milliseconds> rate_limit_delay;
    absl::Status failure;
    if (!res) {
      failure =
          NoAnswerError(res.error(), absl::StrCat("forge ", request.method, " ", request.path));
    } else {
      const auto lower = LowerHeaders(res->headers);
      if (std::optional<SystemTime> until = RateLimitedUntil(lower, env_.Now())) {
        MutexLock lock(mu_);
        blocked_until_ = std::max(blocked_until_, *until);
      }
      log->debug("step=forge-call method={} path={} status={} attempt={}", request.method,
                 request.path, res->status, attempt);
      const HttpOutcome outcome = HttpOutcome::Of(res->status, res->headers);
      if (outcome.Succeeded()) return res->body;
      rate_limit_delay = RateLimitDelay(res->status, lower, res->body, env_.Now(), attempt);
      failure = ForgeError(outcome, request, rate_limit_delay.has_value());
    }
    // Retry, wait or stop: the one table (reconciler/runtime/error_class.h).
    std::optional<milliseconds> delay;
    switch (ClassOfCode(failure.code(), ErrorSource::kCall)) {
      case ErrorClass::kRetry:
        delay = JitteredBackoff(kServerTroubleBackoff, attempt, env_);
        break;
      case ErrorClass::kBusy:
        delay = rate_limit_delay;
        break;
      case ErrorClass::kHalt:
      case ErrorClass::kStall:
        break;
    }
    if (!delay) return failure;
    if (attempt >= options_.max_attempts) {
      return absl::UnavailableError(
          absl::StrCat(failure.message(), " (gave up after ", attempt, " attempts)"));
    }
    log->warn("step=forge-call method={} path={} attempt={} retry-in-ms={} error={}",
              request.method, request.path, attempt, delay->count(),
              LogValue(std::string(failure.message())));
    if (!env_.SleepFor(*delay, stop)) return absl::CancelledError("forge call stopped");
  }
}

absl::StatusOr<std::optional<ForgeComment>> HttpForgeClient::FindComment(int64_t number,
                                                                         std::string_view marker,
                                                                         std::stop_token stop) {
  const ForgeTarget& target = options_.target;
  for (int page = 1; page <= 50; ++page) {
    absl::StatusOr<std::string> answer =
        Send(target.dialect->ListCommentsRequest(target.repository, number, page), stop);
    if (!answer.ok()) return answer.status();
    absl::StatusOr<std::vector<ForgeComment>> comments = ParseComments(*answer);
    if (!comments.ok()) return comments.status();
    for (ForgeComment& comment : *comments) {
      if (comment.body.find(marker) != std::string::npos) return std::move(comment);
    }
    if (comments->size() < target.dialect->CommentsPageSize()) break;
  }
  return std::optional<ForgeComment>();
}

absl::StatusOr<int64_t> HttpForgeClient::CreateComment(int64_t number, const std::string& body,
                                                       std::stop_token stop) {
  const ForgeTarget& target = options_.target;
  absl::StatusOr<std::string> answer =
      Send(target.dialect->CreateCommentRequest(target.repository, number, body), stop);
  if (!answer.ok()) return answer.status();
  return ParseCreatedId(*answer);
}

absl::Status HttpForgeClient::EditComment(int64_t number, int64_t comment_id,
                                          const std::string& body, std::stop_token stop) {
  const ForgeTarget& target = options_.target;
  return Send(target.dialect->EditCommentRequest(target.repository, number, comment_id, body), stop)
      .status();
}

absl::Status HttpForgeClient::SetCommitStatus(const CommitStatus& status, std::stop_token stop) {
  const ForgeTarget& target = options_.target;
  return Send(target.dialect->CommitStatusRequest(target.repository, status), stop).status();
}

absl::StatusOr<std::optional<int64_t>> HttpForgeClient::MergedPullOf(const std::string& sha,
                                                                     std::stop_token stop) {
  const ForgeTarget& target = options_.target;
  std::optional<ForgeRequest> request =
      target.dialect->PullsOfCommitRequest(target.repository, sha);
  if (!request) return std::optional<int64_t>();
  absl::StatusOr<std::string> answer = Send(*request, stop);
  if (!answer.ok()) return answer.status();
  return target.dialect->ParsePullOfCommit(*answer);
}

absl::StatusOr<std::vector<ForgePull>> HttpForgeClient::PullsFromBranch(
    const std::string& head_branch, std::stop_token stop) {
  const ForgeTarget& target = options_.target;
  std::vector<ForgePull> pulls;
  for (int page = 1; page <= kMaxPullPages; ++page) {
    absl::StatusOr<std::string> answer =
        Send(target.dialect->PullsFromBranchRequest(target.repository, head_branch, page), stop);
    if (!answer.ok()) return answer.status();
    absl::StatusOr<ForgePullPage> found = target.dialect->ParsePulls(*answer, head_branch);
    if (!found.ok()) return found.status();
    for (ForgePull& pull : found->pulls) pulls.push_back(std::move(pull));
    if (found->entries < target.dialect->PullsPageSize()) break;
  }
  // Newest first whatever order the forge lists in; a pull request that moved to the next page
  // while paging (a new one came first) is kept once.
  std::stable_sort(pulls.begin(), pulls.end(),
                   [](const ForgePull& a, const ForgePull& b) { return a.number > b.number; });
  pulls.erase(
      std::unique(pulls.begin(), pulls.end(),
                  [](const ForgePull& a, const ForgePull& b) { return a.number == b.number; }),
      pulls.end());
  return pulls;
}

absl::StatusOr<std::vector<int64_t>> HttpForgeClient::LabelIds(
    const std::vector<std::string>& names, std::stop_token stop) {
  const ForgeTarget& target = options_.target;
  std::map<std::string, int64_t> defined;
  for (int page = 1; page <= kMaxPullPages; ++page) {
    std::optional<ForgeRequest> request =
        target.dialect->ListLabelsRequest(target.repository, page);
    if (!request) break;
    absl::StatusOr<std::string> answer = Send(*request, stop);
    if (!answer.ok()) return answer.status();
    absl::StatusOr<std::vector<ForgeLabel>> labels = target.dialect->ParseLabels(*answer);
    if (!labels.ok()) return labels.status();
    for (const ForgeLabel& label : *labels) defined.emplace(label.name, label.id);
    if (labels->size() < target.dialect->LabelsPageSize()) break;
  }
  // A name the repository has no label of has no id to send. Creating the label would need a
  // colour and the right to edit the repository's labels, which opening a pull request does
  // not: it is left out, and the pull request opened without it.
  std::vector<int64_t> ids;
  for (const std::string& name : names) {
    if (auto it = defined.find(name); it != defined.end()) ids.push_back(it->second);
  }
  return ids;
}

absl::StatusOr<ForgePull> HttpForgeClient::CreatePull(const PullDraft& draft,
                                                      std::stop_token stop) {
  const ForgeTarget& target = options_.target;
  std::vector<int64_t> label_ids;
  if (!draft.labels.empty() && target.dialect->ListLabelsRequest(target.repository, 1)) {
    absl::StatusOr<std::vector<int64_t>> ids = LabelIds(draft.labels, stop);
    if (!ids.ok()) return ids.status();
    label_ids = *std::move(ids);
  }
  absl::StatusOr<std::string> answer =
      Send(target.dialect->CreatePullRequest(target.repository, draft, label_ids), stop);
  if (!answer.ok()) return answer.status();
  absl::StatusOr<ForgePull> pull = target.dialect->ParsePull(*answer);
  if (!pull.ok()) return pull.status();
  if (std::optional<ForgeRequest> add =
          target.dialect->AddLabelsRequest(target.repository, pull->number, draft.labels)) {
    absl::Status labelled = Send(*add, stop).status();
    if (!labelled.ok()) {
      return absl::Status(
          labelled.code(),
          absl::StrCat("pull request #", pull->number,
                       " was opened but its labels were not added: ", labelled.message()));
    }
  }
  return pull;
}

absl::Status HttpForgeClient::EditPull(int64_t number, const std::string& title,
                                       const std::string& body, std::stop_token stop) {
  const ForgeTarget& target = options_.target;
  return Send(target.dialect->EditPullRequest(target.repository, number, title, body), stop)
      .status();
}

}  // namespace tr::reconciler::forge
