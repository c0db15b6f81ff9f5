// How `talos-reconciler run` starts the webhook listener and the forge reporting from its
// configuration, and what it does with a verified delivery: the daemon's wiring of
// reconciler/features/webhooks, reconciler/clients/forge and reconciler/features/pull_requests,
// kept apart from daemon.cc.
#pragma once

#include <functional>
#include <memory>
#include <stop_token>
#include <thread>

#include "absl/status/statusor.h"
#include "reconciler/app/daemon/daemon_config.h"
#include "reconciler/clients/factory/factory_installers.h"
#include "reconciler/features/pull_requests/pull_request_flow.h"
#include "reconciler/features/webhooks/webhook_receiver.h"
#include "reconciler/loop/desired_state.h"
#include "reconciler/loop/poll_trigger.h"
#include "reconciler/runtime/metrics.h"

namespace tr::reconciler {

// The listener of `--webhook-listen` feeding `queue`; nullptr when the flag is unset.
// InvalidArgument or Unavailable as webhooks::WebhookReceiver::Start, or for an unreadable secret.
absl::StatusOr<std::unique_ptr<webhooks::WebhookReceiver>> StartWebhookListener(
    const DaemonConfig& config, webhooks::WebhookQueue& queue, Metrics& metrics, Env& env);

// The forge reporting of `--forge`: the API client, the pull request comments and the flow
// that plans pull requests and reports rollouts, with the status store that feeds it.
class ForgeReporting {
 public:
  // Null when --forge is unset. InvalidArgument for an unusable token file or API URL.
  // `inner` is where statuses are recorded; `branch` reads the status branch as it is.
  // `reports` (--leader-elect: whether this replica holds shard 0) makes only that replica
  // report rollouts; it then re-reads `branch` every --poll-interval for the clusters other
  // replicas record. Unset: this process reports every rollout itself. `installers` resolves
  // the schematics of pull request plans (the daemon's, at the watched branch's factories);
  // `broken_releases` lists the Talos releases its Image Factory marks broken (may be null).
  // `desired` tells which clusters have a profile: only their statuses judge a rollout.
  static absl::StatusOr<std::unique_ptr<ForgeReporting>> Start(
      const DaemonConfig& config, gitsource::LibGitSource& source, StatusStore& inner,
      StatusStore& branch, std::function<bool()> reports, factory::FactoryInstallers& installers,
      std::function<std::vector<core::Version>()> broken_releases, const DesiredState& desired,
      Env& env);
  StatusStore& store() { return *store_; }
  pull_requests::PullRequestFlow& flow() { return *flow_; }
  forge::ForgeApi& api() { return *client_; }

 private:
  ForgeReporting() = default;
  std::unique_ptr<forge::HttpForgeClient> client_;
  std::unique_ptr<pull_requests::PullRequestComments> comments_;
  std::unique_ptr<pull_requests::PullRequestFlow> flow_;
  std::unique_ptr<pull_requests::ReportingStatusStore> store_;
  std::jthread refresher_;  // with `reports`: Refresh() every --poll-interval; last: stops first
};

// Takes deliveries from `queue` until `stop`: a push to the watched branch (or a merged pull
// request into it) triggers a poll at once, coalesced by `trigger`; the poll, not the payload,
// decides what changed. With `flow` (--forge), pull request events also go to the flow, which
// plans them on the forge; without, they are logged only.
void DispatchWebhooks(webhooks::WebhookQueue& queue, PollTrigger& trigger,
                      pull_requests::PullRequestFlow* flow, std::stop_token stop);

}  // namespace tr::reconciler
