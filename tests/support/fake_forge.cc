#include "tests/support/fake_forge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "absl/strings/str_split.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/support/http_listen.h"
#include "tests/support/openapi_check.h"

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
  std::vector<std::string> allowed;     // empty: the call takes no body
  std::vector<std::string> states;      // allowed `state` values; empty: no state
  std::vector<std::string> query{};     // the query parameters declared; empty: not checked
  std::vector<std::string> id_lists{};  // fields that are lists of integer ids, not strings
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
            {"GET", p + "/repository/commits/[0-9a-f]{40}/merge_requests", {}, {}, {}},
            {"GET",
             p + "/merge_requests",
             {},
             {},
             {},
             {"state", "source_branch", "target_branch", "order_by", "sort", "per_page", "page"}},
            {"POST",
             p + "/merge_requests",
             {"source_branch", "target_branch", "title"},
             {"source_branch", "target_branch", "title", "description", "labels",
              "remove_source_branch", "squash"},
             {}},
            {"PUT",
             p + "/merge_requests/[0-9]+",
             {},
             {"title", "description", "target_branch", "labels", "add_labels", "state_event"},
             {}}};
  }
  const std::string p = "/repos/" + repository;
  return {{"GET", p + "/issues/[0-9]+/comments", {}, {}, {}},
          {"POST", p + "/issues/[0-9]+/comments", {"body"}, {"body"}, {}},
          {"PATCH", p + "/issues/comments/[0-9]+", {"body"}, {"body"}, {}},
          {"POST",
           p + "/statuses/[0-9a-f]{40}",
           {"state"},
           {"state", "context", "target_url", "description"},
           {"pending", "success", "error", "failure", "warning"}},
          {"GET",
           p + "/pulls",
           {},
           {},
           {},
           {"state", "sort", "milestone", "labels", "poster", "base_branch", "page", "limit"}},
          {"POST",
           p + "/pulls",
           {"head", "base", "title"},
           {"head", "base", "title", "body", "assignee", "labels"},
           {},
           {},
           {"labels"}},
          {"PATCH", p + "/pulls/[0-9]+", {}, {"title", "body", "base", "state", "assignee"}, {}},
          {"GET", p + "/labels", {}, {}, {}, {"page", "limit"}}};
}

bool IsIdList(const json& value) {
  return value.is_array() && std::all_of(value.begin(), value.end(),
                                         [](const json& id) { return id.is_number_integer(); });
}

std::vector<std::string> CheckAgainst(const Shape& shape, const std::string& body,
                                      const std::multimap<std::string, std::string>& query) {
  std::vector<std::string> problems;
  for (const auto& [name, value] : query) {
    if (!shape.query.empty() &&
        std::find(shape.query.begin(), shape.query.end(), name) == shape.query.end()) {
      problems.push_back("query " + name + " is not documented");
    }
  }
  const json value = body.empty() ? json() : json::parse(body, nullptr, false);
  if (shape.allowed.empty()) {
    if (!body.empty()) problems.push_back("a body where the call takes none");
    return problems;
  }
  if (!value.is_object()) return {"the body is not a JSON object"};
  for (const std::string& field : shape.required) {
    if (!value.contains(field)) problems.push_back("required field " + field + " missing");
  }
  for (const auto& [name, field] : value.items()) {
    const bool id_list =
        std::find(shape.id_lists.begin(), shape.id_lists.end(), name) != shape.id_lists.end();
    if (std::find(shape.allowed.begin(), shape.allowed.end(), name) == shape.allowed.end()) {
      problems.push_back("field " + name + " is not documented");
    } else if (id_list) {
      if (!IsIdList(field)) problems.push_back("field " + name + " is not a list of ids");
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
  server_->set_tcp_nodelay(true);  // as the forges' servers: no answer held by Nagle (40 ms)
  auto handler = [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); };
  const std::string any = prefix_ + "/.*";
  server_->Get(any, handler);
  server_->Post(any, handler);
  server_->Patch(any, handler);
  server_->Put(any, handler);
  server_->Delete(any, handler);
  server_->set_post_routing_handler(
      [this](const httplib::Request&, httplib::Response&) { served_.Count(); });
  port_ = server_->bind_to_any_port("127.0.0.1");
  thread_ = test_support::ListenAfterBind(*server_);
}

FakeForge::~FakeForge() {
  server_->stop();
  thread_.join();
  for (const std::string& violation : violations_) ADD_FAILURE() << "fake forge: " << violation;
}

bool FakeForge::WaitFor(std::chrono::milliseconds within, const std::function<bool()>& done) const {
  return served_.Await(within, done);
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

int64_t FakeForge::AddForeignPull(const std::string& head, bool from_fork) {
  std::lock_guard lock(mu_);
  FakePull pull{next_pull_++, "open", "Someone else's change", "", head, "main", {}, 0,
                from_fork,    {}};
  pull.opened = Env::Default().Now();
  pulls_.push_back(pull);
  return pull.number;
}

int64_t FakeForge::DefineLabel(const std::string& name) {
  std::lock_guard lock(mu_);
  labels_.emplace_back(next_id_++, name);
  return labels_.back().first;
}

void FakeForge::ClosePull(int64_t number) {
  std::lock_guard lock(mu_);
  if (FakePull* pull = FindPull(number)) pull->state = "closed";
}

void FakeForge::MarkPullMerged(int64_t number) {
  std::lock_guard lock(mu_);
  if (FakePull* pull = FindPull(number)) pull->state = "merged";
}

std::vector<FakePull> FakeForge::Pulls() const {
  std::lock_guard lock(mu_);
  return pulls_;
}

FakePull* FakeForge::FindPull(int64_t number) {
  for (FakePull& pull : pulls_) {
    if (pull.number == number) return &pull;
  }
  return nullptr;
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
      for (std::string& p : CheckAgainst(shape, req.body, req.params)) {
        problems.push_back(std::move(p));
      }
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
  if (ServePulls(req, path, res)) return;
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

// A pull request as GitHub and Gitea (whose answers copy GitHub's) or GitLab answer it.
std::string FakeForge::PullJson(const FakePull& pull) const {
  const std::string owner = repository_.substr(0, repository_.find('/'));
  const bool merged = pull.state == "merged";
  json labels = json::array();
  for (const std::string& name : pull.labels) labels.push_back({{"name", name}});
  if (forge_ == "gitlab") {
    return json{{"id", pull.number + 50'000},
                {"iid", pull.number},
                {"project_id", 1},
                {"state", pull.state == "open" ? "opened" : pull.state},
                {"title", pull.title},
                {"description", pull.body},
                {"source_branch", pull.head},
                {"target_branch", pull.base},
                {"source_project_id", pull.from_fork ? 2 : 1},
                {"target_project_id", 1},
                {"labels", pull.labels},
                {"web_url", "https://forge.test/" + repository_ + "/-/merge_requests/" +
                                std::to_string(pull.number)}}
        .dump();
  }
  const json base_repo{{"id", 1}, {"full_name", repository_}};
  const json head_repo{{"id", pull.from_fork ? 2 : 1},
                       {"full_name", pull.from_fork ? "someone-else/fleet" : repository_}};
  json answer{
      {"number", pull.number},
      {"state", pull.state == "open" ? "open" : "closed"},
      {"title", pull.title},
      {"body", pull.body.empty() ? json() : json(pull.body)},
      {"head",
       {{"ref", pull.head},
        {"label", (pull.from_fork ? "someone-else" : owner) + ":" + pull.head},
        {"sha", std::string(40, 'a')},
        {"repo", head_repo}}},
      {"base", {{"ref", pull.base}, {"label", owner + ":" + pull.base}, {"repo", base_repo}}},
      {"labels", labels},
      {"merged_at", merged ? json("2026-11-23T12:00:00Z") : json()},
      {"html_url", "https://forge.test/" + repository_ +
                       (forge_ == "gitea" ? "/pulls/" : "/pull/") + std::to_string(pull.number)}};
  if (forge_ == "gitea") answer["merged"] = merged;
  return answer.dump();
}

// The pull requests a list call asks for, newest first, one page of them.
std::string FakeForge::ListPulls(const httplib::Request& req) const {
  const std::string owner = repository_.substr(0, repository_.find('/'));
  auto param = [&req](const char* name, const std::string& otherwise) {
    return req.has_param(name) ? req.get_param_value(name) : otherwise;
  };
  // Each forge's default state, and the most a page holds.
  const std::string state = param("state", forge_ == "gitlab" ? "all" : "open");
  const size_t max_page = forge_ == "gitea" ? 50 : 100;
  const size_t per_page = std::min<size_t>(
      std::stoul(param(forge_ == "gitea" ? "limit" : "per_page", std::to_string(max_page))),
      max_page);
  const size_t page = std::stoul(param("page", "1"));
  std::vector<const FakePull*> matching;
  for (auto it = pulls_.rbegin(); it != pulls_.rend(); ++it) {
    const FakePull& pull = *it;
    const std::string shown = forge_ == "gitlab" ? (pull.state == "open" ? "opened" : pull.state)
                              : pull.state == "open" ? "open"
                                                     : "closed";
    if (state != "all" && state != shown) continue;
    if (forge_ == "github" && req.has_param("head") &&
        req.get_param_value("head") !=
            (pull.from_fork ? "someone-else" : owner) + ":" + pull.head) {
      continue;
    }
    if (forge_ == "gitlab" && req.has_param("source_branch") &&
        req.get_param_value("source_branch") != pull.head) {
      continue;
    }
    matching.push_back(&pull);
  }
  json answer = json::array();
  for (size_t i = (page - 1) * per_page; i < matching.size() && i < page * per_page; ++i) {
    answer.push_back(json::parse(PullJson(*matching[i])));
  }
  return answer.dump();
}

bool FakeForge::ServePulls(const httplib::Request& req, const std::string& path,
                           httplib::Response& res) {
  const bool gitlab = forge_ == "gitlab";
  const std::string repo_path =
      gitlab ? "/projects/" + EncodeProject(repository_) : "/repos/" + repository_;
  const std::string collection = repo_path + (gitlab ? "/merge_requests" : "/pulls");
  static const std::regex number_at_end("/([0-9]+)");
  static const std::regex issue_labels("/issues/([0-9]+)/labels");
  std::smatch m;
  const std::string rest = path.starts_with(repo_path) ? path.substr(repo_path.size()) : "";
  const std::string after = path.starts_with(collection) ? path.substr(collection.size()) : "-";
  const json request = req.body.empty() ? json::object() : json::parse(req.body, nullptr, false);
  auto reply = [&res](int status, const std::string& body) {
    res.status = status;
    res.set_content(body, "application/json");
    return true;
  };
  if (req.method == "GET" && path == collection) return reply(200, ListPulls(req));
  if (req.method == "POST" && path == collection) {
    FakePull pull{next_pull_, "open", request["title"], "", "", "", {}, 0, false, {}};
    pull.opened = Env::Default().Now();
    pull.head = request[gitlab ? "source_branch" : "head"];
    pull.base = request[gitlab ? "target_branch" : "base"];
    pull.body = request.value(gitlab ? "description" : "body", "");
    if (gitlab && request.contains("labels")) {
      std::vector<std::string> names =
          absl::StrSplit(request["labels"].get<std::string>(), ',', absl::SkipEmpty());
      pull.labels = std::move(names);
    }
    for (const json& id : gitlab ? json::array() : request.value("labels", json::array())) {
      for (const auto& [label_id, name] : labels_) {
        if (id.is_number_integer() && id.get<int64_t>() == label_id) pull.labels.push_back(name);
      }
    }
    for (const FakePull& open : pulls_) {
      if (open.state == "open" && !open.from_fork && open.head == pull.head &&
          open.base == pull.base) {
        // GitHub refuses it as invalid (422), GitLab and Gitea as a conflict (409).
        return reply(forge_ == "github" ? 422 : 409,
                     R"({"message":"A pull request already exists for this branch"})");
      }
    }
    if (pull.head == pull.base) return reply(422, R"({"message":"head and base are the same"})");
    ++next_pull_;
    pulls_.push_back(pull);
    return reply(201, PullJson(pull));
  }
  if ((req.method == "PATCH" || req.method == "PUT") && std::regex_match(after, m, number_at_end)) {
    FakePull* pull = FindPull(std::stoll(m[1]));
    if (pull == nullptr) return reply(404, R"({"message":"Not Found"})");
    if (request.contains("title")) pull->title = request["title"];
    const char* body_field = gitlab ? "description" : "body";
    if (request.contains(body_field)) pull->body = request[body_field];
    ++pull->edits;
    return reply(200, PullJson(*pull));
  }
  if (forge_ == "github" && req.method == "POST" && std::regex_match(rest, m, issue_labels)) {
    FakePull* pull = FindPull(std::stoll(m[1]));
    if (pull == nullptr) return reply(404, R"({"message":"Not Found"})");
    json answer = json::array();
    for (const json& name : request.value("labels", json::array())) {
      const std::string label = name.is_string() ? name.get<std::string>() : name.dump();
      if (std::find(pull->labels.begin(), pull->labels.end(), label) == pull->labels.end()) {
        pull->labels.push_back(label);
      }
    }
    for (const std::string& name : pull->labels) answer.push_back({{"name", name}});
    return reply(200, answer.dump());
  }
  if (forge_ == "gitea" && req.method == "GET" && rest == "/labels") {
    const size_t limit = std::min<size_t>(
        req.has_param("limit") ? std::stoul(req.get_param_value("limit")) : 50, 50);
    const size_t page = req.has_param("page") ? std::stoul(req.get_param_value("page")) : 1;
    json answer = json::array();
    for (size_t i = (page - 1) * limit; i < labels_.size() && i < page * limit; ++i) {
      answer.push_back(
          {{"id", labels_[i].first}, {"name", labels_[i].second}, {"color", "ededed"}});
    }
    return reply(200, answer.dump());
  }
  return false;
}

}  // namespace tr::forge_test
