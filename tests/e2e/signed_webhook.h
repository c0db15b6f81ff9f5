// Sends a webhook delivery the way GitHub (GitLab, Gitea) does: signed by GitHub's own library
// (@octokit/webhooks, run by tests/forge/send_webhooks.mjs under node, installed by
// tests/forge/setup) and POSTed over real HTTP. Header-only: it needs TR_SOURCE_DIR, which only
// the test binaries define.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tr::e2e {

// POSTs the JSON file `payload` as event `event` of `forge` ("github", "gitlab", "gitea") to
// `base_url`/hooks/<forge>, signed (or carrying the token) as that forge does; the HTTP
// statuses it got (one per delivery).
inline std::vector<int> SendWebhook(const std::string& base_url, const std::string& secret,
                                    const std::string& forge, const std::string& event,
                                    const std::filesystem::path& payload) {
  const std::string source = TR_SOURCE_DIR;
  const std::string command = fmt::format(
      "node '{0}/tests/forge/send_webhooks.mjs' '{0}/.cache/forge-npm/node_modules' '{1}' '{2}' "
      "{3} '{4}' '{5}'",
      source, base_url, secret, forge, event, payload.string());
  std::vector<int> statuses;
  FILE* pipe = ::popen(command.c_str(), "r");
  char line[4096];
  while (pipe != nullptr && std::fgets(line, sizeof line, pipe) != nullptr) {
    statuses.push_back(nlohmann::json::parse(line)["status"].get<int>());
  }
  if (pipe != nullptr) {
    EXPECT_EQ(::pclose(pipe), 0) << command;
  }
  return statuses;
}

inline std::vector<int> SendGithubWebhook(const std::string& base_url, const std::string& secret,
                                          const std::string& event,
                                          const std::filesystem::path& payload) {
  return SendWebhook(base_url, secret, "github", event, payload);
}

}  // namespace tr::e2e
