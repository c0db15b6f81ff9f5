#include "tests/demo/demo_forge.h"

#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <thread>
#include <vector>

#include "base/hmac.h"
#include "core/base64.h"
#include "httplib.h"
#include "nlohmann/json.hpp"

namespace tr::demo {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Writes `text` to `path` whole (a reader never sees half of it).
void WriteWhole(const fs::path& path, const std::string& text) {
  const fs::path temporary = path.string() + ".tmp";
  std::ofstream(temporary, std::ios::trunc) << text;
  fs::rename(temporary, path);
}

void AppendLine(const fs::path& path, const std::string& line) {
  std::ofstream(path, std::ios::app) << line << "\n";
}

// One line of text: newlines become spaces (a message shown on one line of the demo).
std::string OneLine(std::string text) {
  for (char& c : text) c = c == '\n' || c == '\r' ? ' ' : c;
  return text;
}

struct Comment {
  int64_t id = 0;
  int64_t pull = 0;
  std::string body;
};

class DemoForge {
 public:
  explicit DemoForge(DemoForgeOptions options)
      : o_(std::move(options)), prefix_("/api/v3/repos/" + o_.repository) {}

  void Route(httplib::Server& server) {
    auto rest = [this](const httplib::Request& req, httplib::Response& res) { Rest(req, res); };
    server.Get("/api/v3/.*", rest);
    server.Post("/api/v3/.*", rest);
    server.Patch("/api/v3/.*", rest);
    server.Post("/notify",
                [this](const httplib::Request& req, httplib::Response& res) { Notify(req, res); });
  }

 private:
  void Rest(const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu_);
    if (req.get_header_value("Authorization") != "Bearer " + o_.token) {
      Answer(res, 401, {{"message", "Bad credentials"}});
    } else if (req.path.rfind(prefix_ + "/", 0) != 0) {
      Answer(res, 404, {{"message", "Not Found"}});
    } else {
      const json body = req.body.empty() ? json::object() : json::parse(req.body, nullptr, false);
      Serve(req.method, req.path.substr(prefix_.size()), body,
            req.get_param_value("page").empty() ? 1 : std::stoi(req.get_param_value("page")), res);
    }
    AppendLine(o_.dir / "requests.log",
               req.method + " " + req.path + " " + std::to_string(res.status));
  }

  void Serve(const std::string& method, const std::string& path, const json& body, int page,
             httplib::Response& res) {
    static const std::regex comments("/issues/([0-9]+)/comments");
    static const std::regex comment("/issues/comments/([0-9]+)");
    static const std::regex status("/statuses/([0-9a-f]{40})");
    static const std::regex pulls("/commits/[0-9a-f]{40}/pulls");
    std::smatch m;
    if (method == "GET" && std::regex_match(path, m, comments)) {
      json list = json::array();
      for (const Comment& c : comments_) {
        if (c.pull == std::stoll(m[1]) && page == 1)
          list.push_back({{"id", c.id}, {"body", c.body}});
      }
      Answer(res, 200, list);
    } else if (method == "POST" && std::regex_match(path, m, comments) && body.contains("body")) {
      comments_.push_back({next_id_++, std::stoll(m[1]), body["body"].get<std::string>()});
      Keep(comments_.back());
      Answer(res, 201, {{"id", comments_.back().id}, {"body", comments_.back().body}});
    } else if (method == "PATCH" && std::regex_match(path, m, comment) && body.contains("body")) {
      for (Comment& c : comments_) {
        if (c.id != std::stoll(m[1])) continue;
        c.body = body["body"].get<std::string>();
        Keep(c);
        return Answer(res, 200, {{"id", c.id}, {"body", c.body}});
      }
      Answer(res, 404, {{"message", "Not Found"}});
    } else if (method == "POST" && std::regex_match(path, m, status) && body.contains("state")) {
      AppendLine(o_.dir / "statuses.log", std::string(m[1]) + " " +
                                              body.value("context", "default") + " " +
                                              body["state"].get<std::string>() + " " +
                                              OneLine(body.value("description", "")));
      Answer(res, 201, {{"id", next_id_++}, {"state", body["state"]}});
    } else if (method == "GET" && std::regex_match(path, pulls)) {
      Answer(res, 200, json::array());  // the demo's merge webhook names its pull request
    } else {
      Answer(res, 404, {{"message", "Not Found"}});
    }
  }

  void Keep(const Comment& c) {
    fs::create_directories(o_.dir / "pulls");
    WriteWhole(o_.dir / "pulls" / (std::to_string(c.pull) + ".md"), c.body);
  }

  // A --notify delivery, checked as Standard Webhooks specify (docs/notifications.md): the key
  // is the secret's base64 after whsec_, the signature "v1," and the base64 of
  // HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>").
  void Notify(const httplib::Request& req, httplib::Response& res) {
    const std::string delivery = req.get_header_value("webhook-id");
    const std::string key =
        core::DecodeBase64(std::string_view(o_.notify_secret).substr(6)).value_or("");
    const std::string expected =
        "v1," + core::EncodeBase64(HmacSha256(
                    key, delivery + "." + req.get_header_value("webhook-timestamp") + "." + req.body));
    if (key.empty() || !ConstantTimeEquals(req.get_header_value("webhook-signature"), expected)) {
      return Answer(res, 401, {{"message", "bad signature"}});
    }
    const json n = json::parse(req.body, nullptr, false);
    if (!n.is_object()) return Answer(res, 400, {{"message", "not JSON"}});
    std::lock_guard lock(mu_);
    if (!deliveries_.insert({delivery, true}).second) return Answer(res, 200, json::object());
    AppendLine(o_.dir / "notifications.log",
               OneLine(n.value("event", "?") + " " + n.value("cluster", "?") + ": " +
                       n.value("message", "")));
    Answer(res, 200, json::object());
  }

  static void Answer(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(body.dump(), "application/json");
  }

  const DemoForgeOptions o_;
  const std::string prefix_;
  std::mutex mu_;
  std::vector<Comment> comments_;
  std::map<std::string, bool> deliveries_;
  int64_t next_id_ = 1;
};

}  // namespace

int RunDemoForge(const DemoForgeOptions& options) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  fs::create_directories(options.dir);
  DemoForge forge(options);
  httplib::Server server;
  server.set_read_timeout(5, 0);
  server.set_write_timeout(5, 0);
  forge.Route(server);
  const int port = server.bind_to_any_port("127.0.0.1");
  if (port <= 0) {
    std::cerr << "demo-helper forge: cannot listen on 127.0.0.1\n";
    return 1;
  }
  std::thread thread([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::yield();
  WriteWhole(options.dir / "port", std::to_string(port) + "\n");
  int received = 0;
  sigwait(&signals, &received);
  server.stop();
  thread.join();
  return 0;
}

int SendGithubWebhook(const std::string& url, const std::string& secret, const std::string& event,
                      const std::string& body) {
  static const std::regex http("http://([0-9.]+):([0-9]+)(/.*)");
  std::smatch m;
  if (!std::regex_match(url, m, http)) {
    std::cerr << "demo-helper webhook: want http://<ip>:<port>/<path>, got " << url << "\n";
    return 2;
  }
  httplib::Client client(m[1], std::stoi(m[2]));
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(10, 0);
  // One delivery id per webhook sent: this process sends one, and its body names the action.
  const std::string delivery =
      std::to_string(::getpid()) + "-" + HmacSha256Hex("delivery", body).substr(0, 12);
  const httplib::Headers headers{{"X-GitHub-Event", event},
                                 {"X-GitHub-Delivery", delivery},
                                 {"X-Hub-Signature-256", "sha256=" + HmacSha256Hex(secret, body)},
                                 {"User-Agent", "GitHub-Hookshot/demo"}};
  const auto result = client.Post(m[3].str(), headers, body, "application/json");
  if (!result) {
    std::cerr << "demo-helper webhook: " << httplib::to_string(result.error()) << "\n";
    return 1;
  }
  std::cout << result->status << "\n";
  return result->status / 100 == 2 ? 0 : 1;
}

}  // namespace tr::demo
