// Builds the notifier of `--notify` from its flags: one sink per entry (today every entry is a
// webhook receiver, WebhookNotifier, written in the entry's format) behind a FanOutNotifier.
// A new kind of sink is one class implementing Notifier, chosen here from its entry.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "reconciler/features/notify/notifier.h"
#include "reconciler/features/notify/notify_flags.h"
#include "reconciler/features/notify/webhook_notifier.h"
#include "reconciler/runtime/metrics.h"

namespace tr::reconciler::notify {

// Starts a sink for every entry of `flags`, each spooling in its own folder under
// `options.spool_dir`, and deletes the spools of receivers no longer configured (with no entry,
// every spool; the notifier then drops everything). InvalidArgument for a bad entry or an
// unusable spool directory. `env` as WebhookNotifier::Start's.
absl::StatusOr<std::unique_ptr<Notifier>> StartNotifier(const NotifyFlags& flags,
                                                        const WebhookNotifierOptions& options,
                                                        Metrics& metrics, Env& env);

}  // namespace tr::reconciler::notify
