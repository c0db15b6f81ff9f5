#include "reconciler/app/daemon/forge_wiring.h"

#include "base/secret_file.h"
#include "base/thread_name.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler {

using forge::ForgeClientOptions;
using forge::HttpForgeClient;
using forge::PullRequestAction;
using forge::WebhookEvent;
using forge::WebhookKind;
using pull_requests::PullRequestComments;
using pull_requests::PullRequestFlow;
using pull_requests::PullRequestFlowOptions;
using pull_requests::ReportingStatusStore;
using webhooks::WebhookQueue;
using webhooks::WebhookReceiver;
using webhooks::WebhookReceiverOptions;

absl::StatusOr<std::unique_ptr<WebhookReceiver>> StartWebhookListener(const DaemonConfig& config,
                                                                      WebhookQueue& queue,
                                                                      Metrics& metrics, Env& env) {
  if (config.webhooks.listen.empty()) return nullptr;
  absl::StatusOr<std::string> secret =
      ReadSecretFile(config.webhooks.secret_file, kMinWebhookSecretBytes);
  if (!secret.ok()) return secret.status();
  WebhookReceiverOptions options;
  options.listen = config.webhooks.listen;
  options.secret = *std::move(secret);
  options.branch = config.git.branch;
  return WebhookReceiver::Start(std::move(options), queue, metrics, env);
}

namespace {

// Where people find the status files: the status branch's folder in the forge's web view,
// when --repo is an https URL (the forge's web address); else nothing.
std::string StatusUrl(const DaemonConfig& config) {
  std::string web = config.git.remote.url;
  if (!web.starts_with("https://")) return "";
  if (web.ends_with(".git")) web.resize(web.size() - 4);
  const forge::ForgeApiDialect* dialect = forge::FindApiDialect(config.forge.kind);
  return dialect == nullptr ? "" : dialect->TreeUrl(web, config.status_branch, "status");
}

}  // namespace

absl::StatusOr<std::unique_ptr<ForgeReporting>> ForgeReporting::Start(
    const DaemonConfig& config, gitsource::LibGitSource& source, StatusStore& inner,
    StatusStore& branch, std::function<bool()> reports, factory::FactoryInstallers& installers,
    std::function<std::vector<core::Version>()> broken_releases, const DesiredState& desired,
    Env& env) {
  if (config.forge.kind.empty()) return nullptr;
  absl::StatusOr<std::string> token = ReadSecretFile(config.forge.token_file);
  if (!token.ok()) return token.status();
  const forge::ForgeApiDialect* dialect = forge::FindApiDialect(config.forge.kind);
  if (dialect == nullptr) return absl::InvalidArgumentError("--forge: no such forge");
  ForgeClientOptions options;
  options.target = {dialect, config.forge.repository};
  options.api_url = config.forge.api_url;
  options.token = *std::move(token);
  auto client = HttpForgeClient::Create(std::move(options), env);
  if (!client.ok()) return client.status();
  std::unique_ptr<ForgeReporting> reporting(new ForgeReporting());
  reporting->client_ = *std::move(client);
  reporting->comments_ = std::make_unique<PullRequestComments>(*reporting->client_,
                                                               config.forge.comment_interval, env);
  const bool elected = static_cast<bool>(reports);
  reporting->flow_ = std::make_unique<PullRequestFlow>(
      source, source, *reporting->client_, *reporting->comments_, env,
      PullRequestFlowOptions{dialect,
                             {config.credentials_dir, config.talosconfig},
                             config.node_name,
                             StatusUrl(config),
                             config.kubernetes_upgrade_mode == "inprocess",
                             config.shards() > 1 ? config.shards() : 0,
                             std::move(reports),
                             elected ? &branch : nullptr,
                             &installers,
                             std::move(broken_releases),
                             [&desired](const std::string& cluster) {
                               // Before the first read of the profiles every cluster counts.
                               auto now = desired.Current();
                               return now == nullptr || now->profiles.Knows(cluster);
                             },
                             &branch});
  reporting->store_ = std::make_unique<ReportingStatusStore>(inner, *reporting->flow_);
  if (elected) {  // other replicas' records reach the reporter through the branch only
    reporting->refresher_ = std::jthread(
        [flow = reporting->flow_.get(), &env, every = config.poll_interval](std::stop_token stop) {
          NameThisThread("forge-refresh");
          while (env.SleepFor(every, stop)) flow->Refresh();
        });
  }
  return reporting;
}

void DispatchWebhooks(WebhookQueue& queue, PollTrigger& trigger, PullRequestFlow* flow,
                      std::stop_token stop) {
  auto log = ModuleLogger("webhook");
  while (std::optional<WebhookEvent> event = queue.Pop(stop)) {
    if (flow != nullptr && event->kind == WebhookKind::kPullRequest) {
      flow->PullRequestChanged(*event);
    }
    if (event->kind == WebhookKind::kPush || event->action == PullRequestAction::kMerged) {
      log->info("step=dispatch forge={} delivery={} outcome=poll-now", event->forge,
                LogValue(event->delivery));
      trigger.Trigger();
    } else {
      log->info("step=dispatch forge={} delivery={} pull-request={} action={} outcome=noted",
                event->forge, LogValue(event->delivery), event->number,
                PullRequestActionName(event->action));
    }
  }
}

}  // namespace tr::reconciler
