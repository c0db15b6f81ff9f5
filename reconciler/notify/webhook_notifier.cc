#include "reconciler/notify/webhook_notifier.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <fstream>
#include <limits>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "base/env.h"
#include "base/http_client.h"
#include "base/mutex.h"
#include "fmt/format.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "reconciler/capped_request.h"
#include "reconciler/json_fields.h"
#include "reconciler/logging.h"
#include "reconciler/notify/standard_webhooks.h"
#include "reconciler/private_files.h"

namespace tr::reconciler::notify {
namespace {

namespace fs = std::filesystem;

struct Spooled {
  fs::path file;
  std::string delivery;
  std::string event;
  std::string body;
  int attempts = 0;
  Env::TimePoint due;
};

std::string NewDeliveryId(std::mt19937_64& rng) {
  const uint64_t a = rng(), b = rng();
  // A version 4 UUID: 4 in the version nibble, 10xx in the variant bits.
  return fmt::format("{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff,
                     a & 0xfff, 0x8000 | (b >> 48 & 0x3fff), b & 0xffffffffffff);
}

// 64 bits from the environment's randomness: the seed of a sender's delivery ids.
uint64_t Seed(Env& env) {
  const auto half = [&env] { return static_cast<uint64_t>(env.Uniform() * 4294967296.0); };
  return half() << 32 | half();
}

bool Save(const Spooled& s) {
  const nlohmann::json doc{
      {"delivery", s.delivery}, {"event", s.event}, {"attempts", s.attempts}, {"body", s.body}};
  const fs::path tmp = s.file.string() + ".tmp";
  if (!CreatePrivateFile(tmp).ok()) return false;  // a body may name clusters and nodes
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << doc.dump();
    if (!out.flush()) return false;
  }
  std::error_code ec;
  fs::rename(tmp, s.file, ec);
  return !ec;
}

std::optional<Spooled> LoadOne(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("body") || !doc["body"].is_string()) return std::nullopt;
  Spooled s;
  s.file = file;
  s.delivery = json_fields::Text(doc, "delivery");
  s.event = json_fields::Text(doc, "event");
  s.attempts = static_cast<int>(std::clamp<int64_t>(json_fields::Integer(doc, "attempts", 0), 0,
                                                    std::numeric_limits<int>::max()));
  s.body = doc["body"].get<std::string>();
  return s;
}

}  // namespace

class WebhookNotifier::Sender {
 public:
  Sender(NotifyTarget target, const WebhookNotifierOptions& options, Metrics& metrics)
      : target_(std::move(target)),
        options_(options),
        metrics_(metrics),
        dir_(options.spool_dir / target_.key),
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
      std::optional<Spooled> s = LoadOne(file);
      if (!s) {
        log_->error("step=spool-load target={} file={} outcome=unreadable-dropped", Name(), file.filename().string());
        fs::remove(file, ec);
        continue;
      }
      queue_.push_back(*std::move(s));
    }
    if (!queue_.empty()) log_->info("step=spool-load target={} pending={}", Name(), queue_.size());
    return absl::OkStatus();
  }

  void Start() {
    thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
  }

  void Enqueue(const Notification& n) {
    MutexLock lock(mu_);
    Spooled s;
    s.delivery = NewDeliveryId(rng_);
    s.event = NotificationEventName(n.event);
    s.body = target_.format->Render(n, s.delivery);
    s.file = dir_ / fmt::format("{:020}-{}.json", ++sequence_ + Epoch(), s.delivery);
    if (!Save(s)) {
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
    cv_.notify_all();
  }

  size_t Pending() const {
    MutexLock lock(mu_);
    return queue_.size();
  }

 private:
  std::string Name() const { return target_.origin + "#" + target_.key; }

  // Spool file names sort in creation order across restarts.
  static uint64_t Epoch() {
    static const uint64_t start = static_cast<uint64_t>(
        Env::Default().Now().time_since_epoch() / std::chrono::microseconds(1));
    return start;
  }

  void Run(std::stop_token stop) {
    while (!stop.stop_requested()) {
      MutexLock lock(mu_);
      const auto pending = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty(); };
      if (!cv_.wait(lock, stop, pending)) return;
      const Env::TimePoint due = queue_.front().due, now = env_.Now();
      if (due > now) {
        cv_.wait_for(lock, stop, due - now, [] { return false; });
        continue;
      }
      Spooled head = queue_.front();
      lock.unlock();
      const bool sent = Attempt(head);
      lock.lock();
      Settle(head, sent);
    }
  }

  // Records the outcome of an attempt at the head of the queue.
  void Settle(const Spooled& attempted, bool sent) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (queue_.empty() || queue_.front().file != attempted.file) return;  // dropped meanwhile
    Spooled& head = queue_.front();
    std::error_code ec;
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
    Save(head);
  }

  bool Attempt(const Spooled& s) {
    const auto client = NewHttpClient(target_.origin, {options_.timeout, options_.timeout, {}});
    httplib::Headers headers;
    if (!target_.signing_key.empty()) {
      const int64_t now =
          std::chrono::duration_cast<std::chrono::seconds>(env_.Now().time_since_epoch()).count();
      for (auto& [name, value] :
           StandardWebhookHeaders(target_.signing_key, s.delivery, now, s.body)) {
        headers.emplace(std::move(name), std::move(value));
      }
    }
    // Only the status matters: reading a long answer stops at the cap.
    const CappedAnswer answer =
        SendCapped(*client,
                   MakeRequest("POST", target_.format->Path(target_.path), headers, s.body,
                               "application/json"),
                   options_.max_answer_bytes);
    const bool ok = answer.status >= 200 && answer.status < 300;
    if (!ok) {
      log_->warn("step=send target={} delivery={} attempt={} error=\"{}\"", Name(), s.delivery,
                 s.attempts + 1,
                 answer.status > 0 ? "HTTP " + std::to_string(answer.status)
                                   : httplib::to_string(answer.result.error()));
    } else if (answer.over_cap) {
      log_->warn("step=send target={} delivery={} outcome=sent answer-not-read=\"{}\"", Name(),
                 s.delivery,
                 std::string(AnswerOverCap("the receiver", options_.max_answer_bytes).message()));
    }
    return ok;
  }

  const NotifyTarget target_;
  const WebhookNotifierOptions options_;
  Metrics& metrics_;
  const fs::path dir_;
  Env& env_ = Env::Default();  // the IO is real, so is its time
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
    NotifyTarget target, WebhookNotifierOptions options, Metrics& metrics) {
  if (absl::Status s = MakePrivateDirectory(options.spool_dir); !s.ok()) return s;
  auto sender = std::make_unique<Sender>(std::move(target), options, metrics);
  if (absl::Status s = sender->Load(); !s.ok()) return s;
  sender->Start();
  return std::unique_ptr<WebhookNotifier>(new WebhookNotifier(std::move(sender)));
}

void WebhookNotifier::Notify(const Notification& notification) { sender_->Enqueue(notification); }

size_t WebhookNotifier::Pending() const { return sender_->Pending(); }

}  // namespace tr::reconciler::notify
