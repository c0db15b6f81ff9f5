#include "tests/support/fake_chat.h"

#include <cstdio>
#include <thread>

#include "httplib.h"
#include "tests/support/http_listen.h"
#include "tests/support/wait.h"

namespace tr::fake_chat {
namespace {

using nlohmann::json;

constexpr char kDiscordToken[] = "discord-webhook-token-of-the-tests";

size_t Chars(const json& value) { return value.is_string() ? value.get<std::string>().size() : 0; }

// Why Slack would refuse these blocks (Block Kit's documented limits), or "".
std::string BlocksProblem(const json& blocks) {
  if (!blocks.is_array() || blocks.size() > 50) return "blocks: not an array of at most 50";
  for (const json& block : blocks) {
    const std::string type = block.value("type", "");
    if (type == "section") {
      const json text = block.value("text", json());
      if (!text.is_object() || (text.value("type", "") != "mrkdwn" && text.value("type", "") != "plain_text")) {
        return "section: text is no mrkdwn or plain_text object";
      }
      if (Chars(text["text"]) == 0 || Chars(text["text"]) > 3000) return "section: text empty or over 3000";
    } else if (type == "context") {
      const json elements = block.value("elements", json());
      if (!elements.is_array() || elements.empty() || elements.size() > 10) {
        return "context: 1 to 10 elements";
      }
    } else if (type != "divider" && type != "header") {
      return "block type " + type + " is not one we expect";
    }
  }
  return "";
}

// Why Discord would refuse this message body (its documented embed limits), or "".
std::string EmbedsProblem(const json& body) {
  const json embeds = body.value("embeds", json::array());
  if (!embeds.is_array() || embeds.size() > 10) return "embeds: not an array of at most 10";
  if (embeds.empty() && Chars(body.value("content", json())) == 0) return "no content and no embed";
  size_t total = 0;
  for (const json& embed : embeds) {
    if (Chars(embed.value("title", json())) > 256) return "embed title over 256";
    if (Chars(embed.value("description", json())) > 4096) return "embed description over 4096";
    total += Chars(embed.value("title", json())) + Chars(embed.value("description", json()));
    const json color = embed.value("color", json(0));
    if (!color.is_number_integer() || color.get<int64_t>() < 0 || color.get<int64_t>() > 0xffffff) {
      return "embed color not in 0..0xFFFFFF";
    }
    const json fields = embed.value("fields", json::array());
    if (!fields.is_array() || fields.size() > 25) return "embed fields: at most 25";
    for (const json& field : fields) {
      if (Chars(field.value("name", json())) == 0 || Chars(field.value("name", json())) > 256) return "field name empty or over 256";
      if (Chars(field.value("value", json())) == 0 || Chars(field.value("value", json())) > 1024) return "field value empty or over 1024";
      total += Chars(field["name"]) + Chars(field["value"]);
    }
  }
  return total > 6000 ? "embeds over 6000 characters in all" : "";
}

}  // namespace

class FakeChat::Server {
 public:
  Server(std::string token, std::string channel) : token_(std::move(token)), channel_(std::move(channel)) {
    server_.Post("/api/chat.postMessage", [this](const httplib::Request& req, httplib::Response& res) {
      Slack(req, res, "chat.postMessage");
    });
    server_.Post("/api/chat.update", [this](const httplib::Request& req, httplib::Response& res) {
      Slack(req, res, "chat.update");
    });
    server_.Post(R"(/api/webhooks/4242/([\w-]+))", [this](const httplib::Request& req, httplib::Response& res) {
      Discord(req, res, "");
    });
    server_.Patch(R"(/api/webhooks/4242/([\w-]+)/messages/(\d+))",
                  [this](const httplib::Request& req, httplib::Response& res) {
                    Discord(req, res, req.matches[2]);
                  });
    server_.set_post_routing_handler(
        [this](const httplib::Request&, httplib::Response&) { answered_.Count(); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = test_support::ListenAfterBind(server_);
  }
  ~Server() {
    server_.stop();
    thread_.join();
  }

  std::string Origin() const { return "http://127.0.0.1:" + std::to_string(port_); }

  mutable std::mutex mu_;
  std::vector<ChatMessage> messages_;
  std::map<std::string, int> calls_;
  std::vector<std::string> problems_;
  std::vector<std::string> authorizations_;
  int rate_limited_calls_ = 0;
  double retry_after_ = 0;
  test_support::Changes answered_;  // a request was answered

 private:
  // Answers 429 when told to; true when it did.
  bool RateLimited(httplib::Response& res, bool discord) {
    if (rate_limited_calls_ == 0) return false;
    --rate_limited_calls_;
    res.status = 429;
    res.set_header("Retry-After", std::to_string(retry_after_));
    if (discord) {
      res.set_content(json{{"message", "You are being rate limited."}, {"retry_after", retry_after_},
                           {"global", false}}.dump(), "application/json");
    }
    return true;
  }

  void Slack(const httplib::Request& req, httplib::Response& res, const std::string& method) {
    std::lock_guard lock(mu_);
    ++calls_[method];
    authorizations_.push_back(req.get_header_value("Authorization"));
    if (RateLimited(res, false)) return;
    const auto fail = [&res](const std::string& error) {
      res.set_content(json{{"ok", false}, {"error", error}}.dump(), "application/json");
    };
    if (!req.has_header("Authorization")) return fail("not_authed");
    if (req.get_header_value("Authorization") != "Bearer " + token_) return fail("invalid_auth");
    const json call = json::parse(req.body, nullptr, false);
    if (!call.is_object()) return fail("invalid_json");
    if (call.value("channel", "") != channel_) return fail("channel_not_found");
    if (Chars(call.value("text", json())) == 0 && !call.contains("blocks")) return fail("no_text");
    if (call.contains("blocks")) {
      if (std::string why = BlocksProblem(call["blocks"]); !why.empty()) {
        problems_.push_back(method + ": " + why);
        return fail("invalid_blocks");
      }
    }
    json content = call;
    content.erase("channel");
    content.erase("ts");
    content.erase("thread_ts");
    std::string ts;
    if (method == "chat.update") {
      ChatMessage* message = Find("slack", call.value("ts", ""));
      if (message == nullptr) return fail("message_not_found");
      message->content = content;
      ++message->edits;
      ts = message->id;
    } else {
      char text[32];
      std::snprintf(text, sizeof text, "1764201600.%06lld", static_cast<long long>(++sequence_));
      ts = text;
      const std::string thread = call.value("thread_ts", "");
      if (!thread.empty() && Find("slack", thread) == nullptr) return fail("thread_not_found");
      messages_.push_back({"slack", ts, thread, content, 0});
    }
    res.set_content(json{{"ok", true}, {"channel", channel_}, {"ts", ts}}.dump(), "application/json");
  }

  void Discord(const httplib::Request& req, httplib::Response& res, const std::string& id) {
    std::lock_guard lock(mu_);
    ++calls_[id.empty() ? "discord.execute" : "discord.edit"];
    if (req.matches[1] != kDiscordToken) {
      res.status = 401;
      res.set_content(R"({"message": "Invalid Webhook Token", "code": 50027})", "application/json");
      return;
    }
    if (RateLimited(res, true)) return;
    const json body = json::parse(req.body, nullptr, false);
    const std::string why = body.is_object() ? EmbedsProblem(body) : "not a JSON object";
    if (!why.empty()) {
      problems_.push_back("discord: " + why);
      res.status = 400;
      res.set_content(json{{"message", "Invalid Form Body"}, {"code", 50035}}.dump(), "application/json");
      return;
    }
    ChatMessage* message = nullptr;
    if (id.empty()) {
      messages_.push_back({"discord", std::to_string(1300000000000000000 + ++sequence_), "", body, 0});
      message = &messages_.back();
      if (req.get_param_value("wait") != "true") {
        res.status = 204;
        return;
      }
    } else {
      message = Find("discord", id);
      if (message == nullptr) {
        res.status = 404;
        res.set_content(R"({"message": "Unknown Message", "code": 10008})", "application/json");
        return;
      }
      message->content = body;
      ++message->edits;
    }
    res.set_header("X-RateLimit-Limit", "5");
    res.set_header("X-RateLimit-Remaining", "4");
    res.set_header("X-RateLimit-Reset-After", "2");
    res.set_content(json{{"id", message->id}, {"embeds", message->content.value("embeds", json::array())}}.dump(),
                    "application/json");
  }

  ChatMessage* Find(const std::string& service, const std::string& id) {
    for (ChatMessage& m : messages_) {
      if (m.service == service && m.id == id) return &m;
    }
    return nullptr;
  }

  const std::string token_, channel_;
  httplib::Server server_;
  int port_ = 0;
  int64_t sequence_ = 0;
  std::thread thread_;
};

FakeChat::FakeChat(std::string slack_token, std::string slack_channel)
    : server_(std::make_unique<Server>(std::move(slack_token), std::move(slack_channel))) {}

FakeChat::~FakeChat() = default;

std::string FakeChat::SlackUrl() const { return server_->Origin() + "/api"; }

std::string FakeChat::DiscordUrl() const {
  return server_->Origin() + "/api/webhooks/4242/" + kDiscordToken;
}

std::vector<ChatMessage> FakeChat::Messages() const {
  std::lock_guard lock(server_->mu_);
  return server_->messages_;
}

bool FakeChat::WaitFor(std::chrono::milliseconds within, const std::function<bool()>& done) const {
  return server_->answered_.Await(within, done);
}

int FakeChat::Calls(const std::string& name) const {
  std::lock_guard lock(server_->mu_);
  const auto it = server_->calls_.find(name);
  return it == server_->calls_.end() ? 0 : it->second;
}

std::vector<std::string> FakeChat::Problems() const {
  std::lock_guard lock(server_->mu_);
  return server_->problems_;
}

std::vector<std::string> FakeChat::Authorizations() const {
  std::lock_guard lock(server_->mu_);
  return server_->authorizations_;
}

void FakeChat::Delete(const std::string& id) {
  std::lock_guard lock(server_->mu_);
  std::erase_if(server_->messages_, [&](const ChatMessage& m) { return m.id == id; });
}

void FakeChat::RateLimitNext(int calls, double seconds) {
  std::lock_guard lock(server_->mu_);
  server_->rate_limited_calls_ = calls;
  server_->retry_after_ = seconds;
}

}  // namespace tr::fake_chat
