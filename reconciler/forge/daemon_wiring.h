// How `talos-reconciler run` starts the webhook listener and the notification senders from
// its configuration, and what it does with a verified delivery. Kept apart from daemon.cc so
// the daemon gains a few lines only.
#pragma once

#include <memory>
#include <stop_token>

#include "absl/status/statusor.h"
#include "reconciler/daemon_config.h"
#include "reconciler/forge/poll_trigger.h"
#include "reconciler/forge/webhook_receiver.h"
#include "reconciler/metrics.h"
#include "reconciler/notify/webhook_notifier.h"

namespace tr::reconciler::forge {

// The listener of `--webhook-listen` feeding `queue`; nullptr when the flag is unset.
// InvalidArgument or Unavailable as WebhookReceiver::Start, or for an unreadable secret.
absl::StatusOr<std::unique_ptr<WebhookReceiver>> StartWebhookListener(const DaemonConfig& config,
                                                                      WebhookQueue& queue,
                                                                      Metrics& metrics);

// Takes deliveries from `queue` until `stop`: a push to the watched branch (or a merged pull
// request into it) triggers a poll at once, coalesced by `trigger`; the poll, not the payload,
// decides what changed. Other pull-request events are logged only: planning them on the forge
// is not built yet.
void DispatchWebhooks(WebhookQueue& queue, PollTrigger& trigger, std::stop_token stop);

// The senders of every `--notify` entry, spooling under <state-dir>/notifications (with no
// entry, a notifier that drops everything and clears old spools). InvalidArgument for a bad
// entry or spool directory.
absl::StatusOr<std::unique_ptr<notify::WebhookNotifier>> StartNotifier(const DaemonConfig& config,
                                                                       Metrics& metrics);

}  // namespace tr::reconciler::forge
