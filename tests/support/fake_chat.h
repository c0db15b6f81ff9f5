// Slack's Web API (chat.postMessage, chat.update) and a Discord webhook (execute with
// wait=true, edit a message) on one real HTTP server on loopback, for the notifications that
// keep one message per rollout. They answer as the services document: Slack with HTTP 200 and
// {"ok": false, "error": ...} for a refused call (not_authed, invalid_auth, channel_not_found,
// message_not_found, invalid_blocks, no_text), Discord with 404 {"code": 10008} for a message it
// does not have and 400 for an embed over its limits; both can be told to answer 429 with a
// Retry-After. Every body is checked against the documented limits (Block Kit: at most 50
// blocks, section text at most 3,000 characters, context at most 10 elements; Discord: at most
// 10 embeds, title 256, description 4,096, 25 fields of name 256 and value 1,024, 6,000 in all,
// colour 0..0xFFFFFF); what breaks one is refused and listed in Problems().
//
// Thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace tr::fake_chat {

struct ChatMessage {
  std::string service;  // "slack" or "discord"
  std::string id;       // Slack's ts, Discord's message id
  std::string thread;   // Slack: the thread_ts it replies to, or ""
  nlohmann::json content;  // the latest posted or edited body
  int edits = 0;
};

class FakeChat {
 public:
  // Slack accepts `slack_token` as bearer token and posts to `slack_channel` only.
  FakeChat(std::string slack_token, std::string slack_channel);
  ~FakeChat();
  FakeChat(const FakeChat&) = delete;
  FakeChat& operator=(const FakeChat&) = delete;

  std::string SlackUrl() const;    // "http://127.0.0.1:<port>/api"
  std::string DiscordUrl() const;  // "http://127.0.0.1:<port>/api/webhooks/4242/<token>"

  // Every message there is (deleted ones gone), in the order they were posted.
  std::vector<ChatMessage> Messages() const;
  // Calls by name: "chat.postMessage", "chat.update", "discord.execute", "discord.edit".
  int Calls(const std::string& name) const;
  // Requests refused for breaking the documented rules, each with why.
  std::vector<std::string> Problems() const;
  // Every Authorization header Slack was sent.
  std::vector<std::string> Authorizations() const;
  // True once `done()` (which reads this fake) holds, checked now and after each request
  // answered; false when `within` passes first. Waits on the requests, not by polling.
  bool WaitFor(std::chrono::milliseconds within, const std::function<bool()>& done) const;

  // The message `id` is deleted (by a person in the channel).
  void Delete(const std::string& id);
  // The next `calls` requests are answered 429, asking to wait `seconds`.
  void RateLimitNext(int calls, double seconds);

  class Server;

 private:
  std::unique_ptr<Server> server_;
};

}  // namespace tr::fake_chat
