#include "reconciler/features/notify/webhook_notifier.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

#include "base/env.h"
#include "base/http_client.h"
#include "base/mutex.h"
#include "base/thread_name.h"
#include "fmt/format.h"
#include "reconciler/features/notify/message_ids.h"
#include "reconciler/features/notify/poster.h"
#include "reconciler/features/notify/spool.h"
#include "reconciler/runtime/logging.h"
#include "reconciler/runtime/private_files.h"

namespace tr::reconciler::notify {
namespace {

namespace fs = std::filesystem;

// 64 bits from the environment's randomness: the seed of a sender's delivery ids.
uint64_t Seed(Env& env) {
  const auto half = [&env] { return static_cast<uint64_t>(env.Uniform() * 4294967296.0); };
  return half() << 32 | half();
}

}  // namespace

class WebhookNotifier::Sender {
 public:
  Sender(NotifyTarget target, const WebhookNotifierOptions& options, Metrics& metrics, Env& env)
      : target_(std::move(target)),
        options_(options),
        metrics_(metrics),
        dir_(options.spool_dir / target_.key),
        env_(env),
        ids_(dir_ / "rollout-messages"),
        poster_(target_.format->NewPoster(
            target_, {options.timeout, options.max_answer_bytes, &env_, &ids_})),
        rng_(Seed(env_)),
        log_(ModuleLogger("notify")) {}

  // Before Start; takes the lock only to satisfy the analysis (nothing else runs yet).
  absl::Status Load() {
    MutexLock lock(mu_);
    if (absl::Status s = MakePrivateDirectory(dir_); !s.ok()) return s;
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir_, ec)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      std::optional<Spooled> s = LoadSpooled(file);
      if (!s) {
        log_->error("step=spool-load target={} file={} outcome=unreadable-dropped", Name(), file.filename().string());
        fs::remove(file, ec);
        continue;
      }
      queue_.push_back(*std::move(s));
    }
    if (!queue_.empty()) log_->info("step=spool-load target={} pending={}", Name(), queue_.size());
    if (absl::Status s = ids_.Load(); !s.ok()) {
      log_->error("step=spool-load target={} error=\"{}\" outcome=rollout-messages-forgotten", Name(),
                  std::string(s.message()));
    }
    return absl::OkStatus();
  }

  void Start() {
    thread_ = std::jthread([this](std::stop_token stop) {
      NameThisThread("notify");
      Run(stop);
    });
  }

  void Enqueue(const Notification& n) {
    if (!target_.filter.Accepts(n)) {
      metrics_.notifications.Inc("filtered");
      return;
    }
    MutexLock lock(mu_);
    const std::string rollout = target_.format->UpdatesInPlace() ? RolloutKey(n) : "";
    Spool(n, rollout, /*reply=*/false);
    if (target_.thread_per_node && n.event == NotificationEvent::kNodeUpgraded) {
      Spool(n, rollout, /*reply=*/true);
    }
    cv_.notify_all();
  }

  size_t Pending() const {
    MutexLock lock(mu_);
    return queue_.size();
  }

 private:
  std::string Name() const { return target_.origin + "#" + target_.key; }

  // Writes one delivery to the spool and queues it, dropping the oldest when full.
  void Spool(const Notification& n, const std::string& rollout, bool reply)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Spooled s;
    s.delivery = NewDeliveryId(rng_);
    s.event = NotificationEventName(n.event);
    s.body = reply ? target_.format->RenderReply(n) : target_.format->Render(n, s.delivery);
    s.rollout = rollout;
    s.reply = reply;
    s.file = dir_ / fmt::format("{:020}-{}.json", ++sequence_ + Epoch(env_), s.delivery);
    if (!SaveSpooled(s)) {
      log_->error("step=spool target={} delivery={} error=\"cannot write the spool\"", Name(), s.delivery);
    }
    while (queue_.size() >= options_.max_pending) {
      metrics_.notifications.Inc("dropped");
      log_->error("step=spool target={} delivery={} outcome=dropped reason=\"spool full\"", Name(),
                  queue_.front().delivery);
      std::error_code ec;
      fs::remove(queue_.front().file, ec);
      queue_.pop_front();
    }
    queue_.push_back(std::move(s));
  }

  // An update of a rollout's message that a later one in the queue makes pointless: only the
  // latest state is worth sending (and the receivers limit how often we may).
  bool Superseded(const Spooled& head) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (head.rollout.empty() || head.reply || !ids_.Find(head.rollout)) return false;
    return std::any_of(queue_.begin() + 1, queue_.end(), [&](const Spooled& later) {
      return !later.reply && later.rollout == head.rollout;
    });
  }

  // Spool file names sort in creation order across restarts.
  static uint64_t Epoch(Env& env) {
    static const uint64_t start =
        static_cast<uint64_t>(env.Now().time_since_epoch() / std::chrono::microseconds(1));
    return start;
  }

  void Run(std::stop_token stop) {
    while (!stop.stop_requested()) {
      MutexLock lock(mu_);
      const auto pending = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty(); };
      if (!env_.Wait(cv_, lock, stop, Env::kNoDeadline, pending)) return;
      const Env::TimePoint due = queue_.front().due, now = env_.Now();
      if (due > now) {
        env_.WaitFor(cv_, lock, stop, due - now, [] { return false; });
        continue;
      }
      if (Superseded(queue_.front())) {
        metrics_.notifications.Inc("superseded");
        std::error_code ec;
        fs::remove(queue_.front().file, ec);
        queue_.pop_front();
        continue;
      }
      Spooled head = queue_.front();
      lock.unlock();
      const PostOutcome outcome = Attempt(head);
      lock.lock();
      Settle(head, outcome);
    }
  }

  // Records the outcome of an attempt at the head of the queue.
  void Settle(const Spooled& attempted, const PostOutcome& outcome)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (queue_.empty() || queue_.front().file != attempted.file) return;  // dropped meanwhile
    Spooled& head = queue_.front();
    std::error_code ec;
    if (outcome.Waits()) {
      metrics_.notifications.Inc("waited");
      head.due = env_.Now() + outcome.wait;
      return;
    }
    const bool sent = outcome.sent;
    if (sent || head.attempts + 1 >= options_.max_attempts) {
      if (sent) {
        metrics_.notifications.Inc("sent");
      } else {
        metrics_.notifications.Inc("dropped");
        log_->error("step=send target={} delivery={} outcome=dropped attempts={}", Name(),
                    head.delivery, head.attempts + 1);
      }
      fs::remove(head.file, ec);
      queue_.pop_front();
      return;
    }
    ++head.attempts;
    metrics_.notifications.Inc("retried");
    head.due = env_.Now() + JitteredBackoff({options_.first_retry, options_.max_retry, 0},
                                            head.attempts, env_);
    SaveSpooled(head);
  }

  PostOutcome Attempt(const Spooled& s) {
    const PostOutcome outcome = poster_->Post(s);
    if (outcome.FailedAttempt()) {
      log_->warn("step=send target={} delivery={} attempt={} error=\"{}\"", Name(), s.delivery,
                 s.attempts + 1, outcome.error);
    } else if (!outcome.error.empty()) {
      log_->info("step=send target={} delivery={} outcome={} note=\"{}\"", Name(), s.delivery,
                 outcome.sent ? "sent" : "waiting", outcome.error);
    }
    return outcome;
  }

  const NotifyTarget target_;
  const WebhookNotifierOptions options_;
  Metrics& metrics_;
  const fs::path dir_;
  Env& env_;        // times the retries; its waits are the sender thread's
  MessageIds ids_;  // the sender thread's (and Load's, before it starts)
  std::unique_ptr<Poster> poster_;
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<spdlog::logger> log_;
  mutable Mutex mu_;
  std::condition_variable_any cv_;
  std::deque<Spooled> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t sequence_ ABSL_GUARDED_BY(mu_) = 0;
  std::jthread thread_;  // last: stops before the members it uses go
};

WebhookNotifier::WebhookNotifier(std::unique_ptr<Sender> sender) : sender_(std::move(sender)) {}

WebhookNotifier::~WebhookNotifier() = default;

absl::StatusOr<std::unique_ptr<WebhookNotifier>> WebhookNotifier::Start(
    NotifyTarget target, WebhookNotifierOptions options, Metrics& metrics, Env& env) {
  if (absl::Status s = MakePrivateDirectory(options.spool_dir); !s.ok()) return s;
  auto sender = std::make_unique<Sender>(std::move(target), options, metrics, env);
  if (absl::Status s = sender->Load(); !s.ok()) return s;
  sender->Start();
  return std::unique_ptr<WebhookNotifier>(new WebhookNotifier(std::move(sender)));
}

void WebhookNotifier::Notify(const Notification& notification) { sender_->Enqueue(notification); }

size_t WebhookNotifier::Pending() const { return sender_->Pending(); }

}  // namespace tr::reconciler::notify
