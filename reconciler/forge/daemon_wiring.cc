#include "reconciler/forge/daemon_wiring.h"

#include "reconciler/forge/secret_file.h"
#include "reconciler/logging.h"

namespace tr::reconciler::forge {

absl::StatusOr<std::unique_ptr<WebhookReceiver>> StartWebhookListener(const DaemonConfig& config,
                                                                      WebhookQueue& queue,
                                                                      Metrics& metrics) {
  if (config.webhook_listen.empty()) return nullptr;
  absl::StatusOr<std::string> secret = ReadSecretFile(config.webhook_secret_file);
  if (!secret.ok()) return secret.status();
  WebhookReceiverOptions options;
  options.listen = config.webhook_listen;
  options.secret = *std::move(secret);
  options.branch = config.git.branch;
  return WebhookReceiver::Start(std::move(options), queue, metrics);
}

void DispatchWebhooks(WebhookQueue& queue, PollTrigger& trigger, std::stop_token stop) {
  auto log = ModuleLogger("webhook");
  while (std::optional<WebhookEvent> event = queue.Pop(stop)) {
    if (event->kind == WebhookKind::kPush || event->action == PullRequestAction::kMerged) {
      log->info("step=dispatch forge={} delivery={} outcome=poll-now", ForgeName(event->forge),
                event->delivery);
      trigger.Trigger();
    } else {
      log->info("step=dispatch forge={} delivery={} pull-request={} action={} outcome=noted",
                ForgeName(event->forge), event->delivery, event->number,
                PullRequestActionName(event->action));
    }
  }
}

absl::StatusOr<std::unique_ptr<notify::WebhookNotifier>> StartNotifier(const DaemonConfig& config,
                                                                       Metrics& metrics) {
  std::vector<notify::NotifyTarget> targets;
  for (const std::string& entry : config.notify) {
    absl::StatusOr<notify::NotifyTarget> target = notify::ParseNotifyTarget(entry);
    if (!target.ok()) return target.status();
    targets.push_back(*std::move(target));
  }
  notify::WebhookNotifierOptions options;
  options.spool_dir = config.state_dir / "notifications";
  return notify::WebhookNotifier::Start(std::move(targets), std::move(options), metrics);
}

}  // namespace tr::reconciler::forge
