#include "tests/support/openapi_check.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "absl/strings/str_split.h"

namespace tr::forge_test {
namespace {

using nlohmann::json;

std::vector<std::string> Segments(const std::string& path) {
  return absl::StrSplit(path, '/', absl::SkipEmpty());
}

bool IsParam(const std::string& segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

bool MatchesType(const json& schema, const std::string& text) {
  const std::string type = schema.value("type", "string");
  if (type == "integer") return std::regex_match(text, std::regex("-?[0-9]+"));
  if (type == "boolean") return text == "true" || text == "false";
  if (schema.contains("enum")) {
    for (const json& allowed : schema["enum"]) {
      if (allowed.is_string() && allowed.get<std::string>() == text) return true;
    }
    return false;
  }
  return !text.empty();
}

bool MatchesJsonType(const json& schema, const json& value) {
  if (value.is_null()) return schema.value("nullable", false);
  const std::string type = schema.value("type", "");
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_number_integer();
  if (type == "boolean") return value.is_boolean();
  if (type == "array") return value.is_array();
  if (type == "object") return value.is_object();
  return true;  // oneOf/anyOf: not checked deeper
}

}  // namespace

const GithubOpenApi& GithubOpenApi::Installed() {
  static const GithubOpenApi* spec = [] {
    const std::string file = std::string(TR_SOURCE_DIR) + "/.cache/forge-npm/api.github.com.json";
    std::ifstream in(file);
    EXPECT_TRUE(in.good()) << "GitHub's REST description missing: run tests/forge/setup";
    json parsed = in.good() ? json::parse(in, nullptr, false) : json::object();
    if (parsed.is_discarded()) parsed = json::object();
    return new GithubOpenApi(std::move(parsed));
  }();
  return *spec;
}

const json& GithubOpenApi::Resolve(const json& node) const {
  if (!node.is_object() || !node.contains("$ref")) return node;
  const std::string ref = node["$ref"].get<std::string>();  // "#/components/parameters/owner"
  return spec_.at(json::json_pointer(ref.substr(1)));
}

std::string GithubOpenApi::MatchPath(const std::string& method, const std::string& path) const {
  const std::vector<std::string> wanted = Segments(path);
  std::string best;
  int best_literals = -1;
  if (!spec_.contains("paths")) return best;
  for (const auto& [templ, item] : spec_["paths"].items()) {
    if (!item.contains(method)) continue;
    const std::vector<std::string> parts = Segments(templ);
    if (parts.size() != wanted.size()) continue;
    int literals = 0;
    bool match = true;
    for (size_t i = 0; i < parts.size() && match; ++i) {
      if (IsParam(parts[i])) continue;
      match = parts[i] == wanted[i];
      ++literals;
    }
    if (match && literals > best_literals) {
      best = templ;
      best_literals = literals;
    }
  }
  return best;
}

void GithubOpenApi::CheckParameters(const json& operation, const json& path_item,
                                    const std::string& templ, const HttpRequestView& request,
                                    std::vector<std::string>& problems) const {
  std::map<std::string, std::string> path_values;
  const std::vector<std::string> parts = Segments(templ), values = Segments(request.path);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (IsParam(parts[i])) path_values[parts[i].substr(1, parts[i].size() - 2)] = values[i];
  }
  std::map<std::string, const json*> declared_query;
  for (const json* list : {&path_item, &operation}) {
    if (!list->contains("parameters")) continue;
    for (const json& raw : (*list)["parameters"]) {
      const json& param = Resolve(raw);
      const std::string name = param["name"], in = param["in"];
      const json schema = param.value("schema", json::object());
      if (in == "path" && !MatchesType(schema, path_values[name])) {
        problems.push_back("path parameter " + name + "=\"" + path_values[name] + "\" is not a " +
                           schema.value("type", "string"));
      }
      if (in == "query") {
        declared_query[name] = &param;
        const bool present = request.query.contains(name);
        if (param.value("required", false) && !present)
          problems.push_back("query " + name + " missing");
        if (present && !MatchesType(schema, request.query.at(name))) {
          problems.push_back("query " + name + "=\"" + request.query.at(name) +
                             "\" has the wrong type");
        }
      }
    }
  }
  for (const auto& [name, value] : request.query) {
    if (!declared_query.contains(name)) problems.push_back("query " + name + " is not declared");
  }
}

void GithubOpenApi::CheckBody(const json& operation, const HttpRequestView& request,
                              std::vector<std::string>& problems) const {
  if (!operation.contains("requestBody")) {
    if (!request.body.empty()) problems.push_back("a body where the operation takes none");
    return;
  }
  const json& request_body = Resolve(operation["requestBody"]);
  if (request.body.empty()) {
    if (request_body.value("required", false)) problems.push_back("the required body is missing");
    return;
  }
  if (!request_body["content"].contains("application/json")) {
    problems.push_back("the operation takes no JSON body");
    return;
  }
  const auto type = request.headers.find("content-type");
  if (type == request.headers.end() || !type->second.starts_with("application/json")) {
    problems.push_back("Content-Type is not application/json");
  }
  const json body = json::parse(request.body, nullptr, false);
  if (!body.is_object()) {
    problems.push_back("the body is not a JSON object");
    return;
  }
  // A body declared as one of several shapes (oneOf: adding labels) conforms when it conforms
  // to one of them; when it conforms to none, the first shape's problems are reported.
  const json& declared = Resolve(request_body["content"]["application/json"]["schema"]);
  std::vector<const json*> shapes;
  if (declared.contains("oneOf")) {
    for (const json& shape : declared["oneOf"]) shapes.push_back(&Resolve(shape));
  }
  if (shapes.empty()) shapes.push_back(&declared);
  std::vector<std::string> first;
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<std::string> found;
    CheckFields(*shapes[i], body, found);
    if (found.empty()) return;
    if (i == 0) first = std::move(found);
  }
  problems.insert(problems.end(), first.begin(), first.end());
}

void GithubOpenApi::CheckFields(const json& schema, const json& body,
                                std::vector<std::string>& problems) const {
  for (const json& field : schema.value("required", json::array())) {
    if (!body.contains(field.get<std::string>())) {
      problems.push_back("required field " + field.get<std::string>() + " missing");
    }
  }
  const json properties = schema.value("properties", json::object());
  for (const auto& [name, value] : body.items()) {
    if (!properties.contains(name)) {
      problems.push_back("field " + name + " is not in the description");
      continue;
    }
    const json& property = Resolve(properties[name]);
    if (!MatchesJsonType(property, value))
      problems.push_back("field " + name + " has the wrong type");
    if (property.contains("enum") && !value.is_null() &&
        std::find(property["enum"].begin(), property["enum"].end(), value) ==
            property["enum"].end()) {
      problems.push_back("field " + name + "=" + value.dump() + " is not one of " +
                         property["enum"].dump());
    }
  }
}

std::vector<std::string> GithubOpenApi::Check(const HttpRequestView& request) const {
  std::vector<std::string> problems;
  std::string method = request.method;
  std::transform(method.begin(), method.end(), method.begin(), ::tolower);
  const std::string templ = MatchPath(method, request.path);
  if (templ.empty()) {
    problems.push_back(request.method + " " + request.path + " is no operation of the description");
    return problems;
  }
  const json& item = spec_["paths"][templ];
  CheckParameters(item[method], item, templ, request, problems);
  CheckBody(item[method], request, problems);
  // What GitHub's REST docs ask of every call (the description does not list these headers).
  auto header = [&](const std::string& name) {
    auto it = request.headers.find(name);
    return it == request.headers.end() ? std::string() : it->second;
  };
  if (header("accept") != "application/vnd.github+json") {
    problems.push_back("Accept is not application/vnd.github+json");
  }
  if (!std::regex_match(header("x-github-api-version"),
                        std::regex("20[0-9]{2}-[0-9]{2}-[0-9]{2}"))) {
    problems.push_back("X-GitHub-Api-Version missing");
  }
  if (!std::regex_match(header("authorization"), std::regex("(Bearer|token) [^ ]+"))) {
    problems.push_back("Authorization is not a token");
  }
  if (header("user-agent").empty()) problems.push_back("User-Agent missing (GitHub rejects it)");
  return problems;
}

}  // namespace tr::forge_test
