#include "tests/support/fake_forge.h"

#include <gtest/gtest.h>

#include <regex>

#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/support/openapi_check.h"
#include "tests/support/wait.h"

namespace tr::forge_test {
namespace {

using nlohmann::json;

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), ::tolower);
  return text;
}

std::string EncodeProject(const std::string& path) {
  std::string out;
  for (char c : path) out += c == '/' ? std::string("%2F") : std::string(1, c);
  return out;
}

// The documented shape of one GitLab or Gitea call (forge facts; the APIs' reference pages).
struct Shape {
  std::string method;
  std::string path;  // regex over the path below the base URL, repository already substituted
  std::vector<std::string> required;
  std::vector<std::string> allowed;
  std::vector<std::string> states;  // allowed `state` values; empty: no state
};

std::vector<Shape> Shapes(const std::string& forge, const std::string& repository) {
  if (forge == "gitlab") {
    const std::string p =
        "/projects/" + std::regex_replace(EncodeProject(repository), std::regex("[.]"), "\\.");
    return {{"GET", p + "/merge_requests/[0-9]+/notes", {}, {}, {}},
            {"POST", p + "/merge_requests/[0-9]+/notes", {"body"}, {"body"}, {}},
            {"PUT", p + "/merge_requests/[0-9]+/notes/[0-9]+", {"body"}, {"body"}, {}},
            {"POST",
             p + "/statuses/[0-9a-f]{40}",
             {"state"},
             {"state", "name", "target_url", "description", "ref", "context", "coverage"},
             {"pending", "running", "success", "failed", "canceled"}},
            {"GET", p + "/repository/commits/[0-9a-f]{40}/merge_requests", {}, {}, {}}};
  }
  const std::string p = "/repos/" + repository;
  return {{"GET", p + "/issues/[0-9]+/comments", {}, {}, {}},
          {"POST", p + "/issues/[0-9]+/comments", {"body"}, {"body"}, {}},
          {"PATCH", p + "/issues/comments/[0-9]+", {"body"}, {"body"}, {}},
          {"POST",
           p + "/statuses/[0-9a-f]{40}",
           {"state"},
           {"state", "context", "target_url", "description"},
           {"pending", "success", "error", "failure", "warning"}}};
}

std::vector<std::string> CheckAgainst(const Shape& shape, const std::string& body) {
  std::vector<std::string> problems;
  const json value = body.empty() ? json() : json::parse(body, nullptr, false);
  if (shape.required.empty()) {
    if (!body.empty()) problems.push_back("a body where the call takes none");
    return problems;
  }
  if (!value.is_object()) return {"the body is not a JSON object"};
  for (const std::string& field : shape.required) {
    if (!value.contains(field)) problems.push_back("required field " + field + " missing");
  }
  for (const auto& [name, field] : value.items()) {
    if (std::find(shape.allowed.begin(), shape.allowed.end(), name) == shape.allowed.end()) {
      problems.push_back("field " + name + " is not documented");
    } else if (!field.is_string()) {
      problems.push_back("field " + name + " is not a string");
    }
  }
  if (!shape.states.empty() && value.contains("state") && value["state"].is_string() &&
      std::find(shape.states.begin(), shape.states.end(), value["state"]) == shape.states.end()) {
    problems.push_back("state " + value["state"].dump() + " is not documented");
  }
  return problems;
}

}  // namespace

FakeForge::FakeForge(std::string forge, std::string repository, std::string token)
    : forge_(std::move(forge)),
      repository_(std::move(repository)),
      token_(std::move(token)),
      prefix_(forge_ == "github"   ? "/api/v3"
              : forge_ == "gitlab" ? "/api/v4"
                                   : "/api/v1"),
      server_(std::make_unique<httplib::Server>()) {
  // GitHub's description is parsed once per process, seconds under ASan on a loaded machine:
  // before serving, so that it never holds up an answer past the client's read timeout.
  if (forge_ == "github") (void)GithubOpenApi::Installed();
  auto handler = [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); };
  const std::string any = prefix_ + "/.*";
  server_->Get(any, handler);
  server_->Post(any, handler);
  server_->Patch(any, handler);
  server_->Put(any, handler);
  server_->Delete(any, handler);
  port_ = server_->bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

FakeForge::~FakeForge() {
  // httplib 0.11: stop() before the listen loop started leaves that loop running forever.
  (void)test_support::WaitUntil([&] { return server_->is_running(); }, std::chrono::seconds(10));
  server_->stop();
  thread_.join();
  for (const std::string& violation : violations_) ADD_FAILURE() << "fake forge: " << violation;
}

std::string FakeForge::api_url() const {
  return "http://127.0.0.1:" + std::to_string(port_) + prefix_;
}

void FakeForge::Inject(FakeResponse response, int count) {
  std::lock_guard lock(mu_);
  for (int i = 0; i < count; ++i) injected_.push_back(response);
}

void FakeForge::SetMergedPull(const std::string& sha, int64_t number) {
  std::lock_guard lock(mu_);
  merged_pulls_[sha] = number;
}

void FakeForge::AddForeignComment(int64_t pull_request, const std::string& body) {
  std::lock_guard lock(mu_);
  comments_.push_back({next_id_++, pull_request, body, 0});
}

std::vector<FakeComment> FakeForge::Comments(int64_t pull_request) const {
  std::lock_guard lock(mu_);
  std::vector<FakeComment> out;
  for (const FakeComment& c : comments_) {
    if (c.pull_request == pull_request) out.push_back(c);
  }
  return out;
}

std::vector<FakeStatus> FakeForge::Statuses(const std::string& sha) const {
  std::lock_guard lock(mu_);
  std::vector<FakeStatus> out;
  for (const FakeStatus& s : statuses_) {
    if (s.sha == sha) out.push_back(s);
  }
  return out;
}

std::vector<std::string> FakeForge::Requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

std::vector<std::string> FakeForge::Violations() const {
  std::lock_guard lock(mu_);
  return violations_;
}

size_t FakeForge::InjectedLeft() const {
  std::lock_guard lock(mu_);
  return injected_.size();
}

std::string FakeForge::Transcript() const {
  std::lock_guard lock(mu_);
  return transcript_;
}

std::vector<std::string> FakeForge::CheckShape(const httplib::Request& req,
                                               const std::string& path) const {
  if (forge_ == "github") {
    HttpRequestView view{req.method, path, {}, {}, req.body};
    for (const auto& [name, value] : req.params) view.query[name] = value;
    for (const auto& [name, value] : req.headers) view.headers[Lower(name)] = value;
    return GithubOpenApi::Installed().Check(view);
  }
  std::vector<std::string> problems;
  const std::string auth =
      req.get_header_value(forge_ == "gitlab" ? "PRIVATE-TOKEN" : "Authorization");
  if (auth.empty()) problems.push_back("no token header");
  for (const Shape& shape : Shapes(forge_, repository_)) {
    if (shape.method == req.method && std::regex_match(path, std::regex(shape.path))) {
      for (std::string& p : CheckAgainst(shape, req.body)) problems.push_back(std::move(p));
      return problems;
    }
  }
  problems.push_back(req.method + " " + path + " is no documented call");
  return problems;
}

void FakeForge::Handle(const httplib::Request& req, httplib::Response& res) {
  const std::string target = req.target.substr(0, req.target.find('?'));
  const std::string path = target.substr(prefix_.size());
  std::lock_guard lock(mu_);
  requests_.push_back(req.method + " " + path);
  for (const auto& [name, value] : req.headers) transcript_ += name + ": " + value + "\n";
  transcript_ += req.body + "\n";
  std::vector<std::string> problems = CheckShape(req, path);
  if (!problems.empty()) {
    for (const std::string& p : problems) violations_.push_back(req.method + " " + path + ": " + p);
    res.status = 422;
    res.set_content(R"({"message":"Validation Failed"})", "application/json");
    return;
  }
  const std::string expected_auth = forge_ == "gitlab"  ? token_
                                    : forge_ == "gitea" ? "token " + token_
                                                        : "Bearer " + token_;
  if (req.get_header_value(forge_ == "gitlab" ? "PRIVATE-TOKEN" : "Authorization") !=
      expected_auth) {
    res.status = 401;
    res.set_content(R"({"message":"Bad credentials"})", "application/json");
    return;
  }
  if (!injected_.empty()) {
    const FakeResponse injected = injected_.front();
    injected_.erase(injected_.begin());
    res.status = injected.status;
    for (const auto& [name, value] : injected.headers) res.set_header(name, value);
    res.set_content(injected.body, "application/json");
    return;
  }
  const std::string page = req.get_param_value("page");
  Serve(req.method, path, req.body, page.empty() ? 1 : std::stoi(page), res);
}

void FakeForge::Serve(const std::string& method, const std::string& path, const std::string& body,
                      int page, httplib::Response& res) {
  static const std::regex list(".*/(issues|merge_requests)/([0-9]+)/(comments|notes)");
  static const std::regex edit(".*/(comments|notes)/([0-9]+)");
  static const std::regex status(".*/statuses/([0-9a-f]{40})");
  static const std::regex pulls(".*/commits/([0-9a-f]{40})/(pulls|merge_requests)");
  const json request = body.empty() ? json::object() : json::parse(body, nullptr, false);
  std::smatch m;
  json answer;
  res.status = 200;
  if (method == "GET" && std::regex_match(path, m, list)) {
    answer = json::array();
    for (const FakeComment& c : comments_) {
      if (c.pull_request == std::stoll(m[2])) answer.push_back({{"id", c.id}, {"body", c.body}});
    }
    // One page holds everything: a later page is empty, as on the real forges.
    if (page > 1) answer = json::array();
  } else if (method == "POST" && std::regex_match(path, m, list)) {
    comments_.push_back({next_id_++, std::stoll(m[2]), request["body"], 0});
    answer = {{"id", comments_.back().id}, {"body", comments_.back().body}};
    res.status = 201;
  } else if ((method == "PATCH" || method == "PUT") && std::regex_match(path, m, edit)) {
    auto it = std::find_if(comments_.begin(), comments_.end(),
                           [&](const FakeComment& c) { return c.id == std::stoll(m[2]); });
    if (it == comments_.end()) {
      res.status = 404;
      answer = {{"message", "Not Found"}};
    } else {
      it->body = request["body"];
      ++it->edits;
      answer = {{"id", it->id}, {"body", it->body}};
    }
  } else if (method == "POST" && std::regex_match(path, m, status)) {
    statuses_.push_back({m[1], request.value(forge_ == "gitlab" ? "name" : "context", "default"),
                         request["state"], request.value("description", ""),
                         request.value("target_url", "")});
    answer = {{"id", next_id_++}, {"state", request["state"]}};
    res.status = 201;
  } else if (method == "GET" && std::regex_match(path, m, pulls)) {
    answer = json::array();
    if (auto it = merged_pulls_.find(m[1]); it != merged_pulls_.end()) {
      if (forge_ == "gitlab") {
        answer.push_back({{"iid", it->second}, {"state", "merged"}});
      } else {
        answer.push_back({{"number", it->second}, {"merged_at", "2026-11-23T12:00:00Z"}});
      }
    }
  } else {
    res.status = 404;
    answer = {{"message", "Not Found"}};
  }
  res.set_content(answer.dump(), "application/json");
}

}  // namespace tr::forge_test
