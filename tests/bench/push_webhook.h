// A signed GitHub push delivery to the daemon's webhook listener, as a forge sends one after a
// push: what makes a daemon look at the repository at once instead of on its poll interval.
//
// Use inside StartAtRest's daemon callback (the listener goes beside the fleet's nodes, so the
// simulator must be running): `hook = ListenForPushWebhooks(world, dir, d);`, then after each
// push `hook.Send(commit, "delivery-1")`.
//
// Thread-compatible.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "base/hmac.h"
#include "fmt/format.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/support/e2e/e2e_world.h"

namespace tr::e2e {

inline constexpr char kBenchWebhookSecret[] = "bench-webhook-secret";

struct PushWebhook {
  std::string host;
  int port = 0;  // 0: no free port was found; the daemon cannot listen, and says so

  // Delivers a push of `commit` to main; Unavailable unless the daemon accepted it (202).
  absl::Status Send(const std::string& commit, const std::string& delivery) const {
    const std::string body =
        nlohmann::json{{"ref", "refs/heads/main"}, {"after", commit}}.dump();
    const httplib::Headers headers{
        {"X-GitHub-Event", "push"},
        {"X-GitHub-Delivery", delivery},
        {"X-Hub-Signature-256",
         "sha256=" + HmacSha256Hex(kBenchWebhookSecret, body)}};
    httplib::Client client(host, port);
    auto reply = client.Post("/hooks/github", headers, body, "application/json");
    if (reply && reply->status == 202) return absl::OkStatus();
    return absl::UnavailableError(
        fmt::format("webhook {}: answered {}", delivery, reply ? reply->status : 0));
  }
};

// Makes the daemon of `world` listen for GitHub webhooks signed with kBenchWebhookSecret (the
// secret file goes in `dir`), on a free port at <fleet prefix>.251.
inline PushWebhook ListenForPushWebhooks(E2eWorld& world, const std::filesystem::path& dir,
                                         DaemonOptions& daemon) {
  PushWebhook hook{.host = world.sim().address_prefix() + ".251"};
  hook.port = FreePort(hook.host).value_or(0);
  std::ofstream(dir / "webhook-secret") << kBenchWebhookSecret << "\n";
  daemon.extra_args.insert(daemon.extra_args.end(),
                           {"--webhook-listen", fmt::format("{}:{}", hook.host, hook.port),
                            "--webhook-secret-file", (dir / "webhook-secret").string()});
  return hook;
}

}  // namespace tr::e2e
