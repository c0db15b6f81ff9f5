// One `--notify` receiver, sent to at least once without ever holding up the caller (a
// rollout): Notify() writes the delivery to the receiver's spool directory and returns; a
// worker thread sends the deliveries in order, retrying with exponential backoff, and a
// delivery leaves the spool only once the receiver answered 2xx (or after the last attempt).
// A restarted process sends what the spool still holds. The spool's directories are 0700 and
// its files 0600 (a delivery names clusters and nodes). The receiver's answer counts by its
// status alone and is read no further than `max_answer_bytes`.
//
// A format that signs (json) sends each attempt signed as Standard Webhooks specify
// (standard_webhooks.h): the delivery id, a UUID the same on every retry, is the webhook-id.
// Several receivers: FanOutNotifier.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "reconciler/features/notify/notifier.h"
#include "reconciler/features/notify/notify_target.h"
#include "reconciler/runtime/metrics.h"

namespace tr::reconciler::notify {

struct WebhookNotifierOptions {
  std::filesystem::path spool_dir;                      // <state-dir>/notifications
  std::chrono::milliseconds first_retry{2000};          // doubled per failed attempt (jittered)
  std::chrono::milliseconds max_retry{std::chrono::minutes(10)};  // ... up to this
  int max_attempts = 12;                                // then the delivery is dropped
  std::chrono::seconds timeout{10};                     // connect, read and write, per attempt
  size_t max_pending = 1000;                            // then the oldest go first
  size_t max_answer_bytes = size_t{1} << 20;            // a receiver's answer is read no further
};

class WebhookNotifier final : public Notifier {
 public:
  // Loads what the spool holds for `target` (in <spool_dir>/<target.key>) and starts its
  // sender. InvalidArgument when a spool directory cannot be created. The sender waits and
  // times its retries through `env` (the posters' IO is real; a test's env moves the retries).
  static absl::StatusOr<std::unique_ptr<WebhookNotifier>> Start(NotifyTarget target,
                                                                WebhookNotifierOptions options,
                                                                Metrics& metrics, Env& env);
  ~WebhookNotifier() override;  // stops the sender; what is unsent stays spooled

  void Notify(const Notification& notification) override;
  // Deliveries not yet sent.
  size_t Pending() const;

  class Sender;

 private:
  explicit WebhookNotifier(std::unique_ptr<Sender> sender);
  std::unique_ptr<Sender> sender_;
};

}  // namespace tr::reconciler::notify
