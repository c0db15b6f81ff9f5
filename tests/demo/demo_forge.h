// The demo's stand-in for GitHub and for a notification receiver, over HTTP on loopback, for
// scripts/demo (which must run with the demo's packages alone, so no GoogleTest and no npm: the
// tests' fake forge, tests/support/fake_forge.h, needs both).
//
// It serves the GitHub REST calls the reconciler makes for pull requests (below /api/v3, as
// GitHub Enterprise does): list, create and edit issue comments, create commit statuses, list
// the pull requests of a commit. Requests must carry `Authorization: Bearer <token>`. It also
// takes `--notify` deliveries on POST /notify, checks their signature and keeps them.
// Everything it keeps is written under `dir` so that a shell script can show it:
//   dir/port                   the port it listens on (written once it listens)
//   dir/pulls/<n>.md           the latest body of each comment on pull request <n>
//   dir/statuses.log           "<sha> <context> <state> <description>" per commit status
//   dir/notifications.log      "<event> <cluster> [<progress>] <message>" per notification
//   dir/requests.log           "<METHOD> <path> <http status>" per request
//
// Thread-safety: one server thread; the files are written under one lock.
#pragma once

#include <filesystem>
#include <string>

namespace tr::demo {

struct DemoForgeOptions {
  std::filesystem::path dir;
  std::string repository;     // owner/name
  std::string token;          // what the forge token file holds
  std::string notify_secret;  // what the notification receiver's secret file holds: whsec_<base64>
};

// Serves until SIGINT or SIGTERM; returns the process's exit code.
int RunDemoForge(const DemoForgeOptions& options);

// POSTs `body` as GitHub event `event` to `url` (http://host:port/hooks/github), signed with
// `secret` as GitHub signs (X-Hub-Signature-256). Prints the HTTP status; returns 0 on 2xx.
int SendGithubWebhook(const std::string& url, const std::string& secret, const std::string& event,
                      const std::string& body);

}  // namespace tr::demo
