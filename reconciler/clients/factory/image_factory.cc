#include "reconciler/clients/factory/image_factory.h"

#include <algorithm>
#include <utility>

#include "base/http_client.h"
#include "base/http_outcome.h"
#include "base/percent_encoding.h"
#include "core/names.h"
#include "core/yaml_text.h"
#include "fmt/format.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "reconciler/clients/registry/installer_tags.h"
#include "reconciler/runtime/capped_request.h"

namespace tr::reconciler::factory {
namespace {

// The body of a 2xx answer to `method` on `target`.
absl::StatusOr<std::string> Send(const ImageFactoryOptions& options, std::string method,
                                 const std::string& target, std::string body = "") {
  const auto client =
      NewHttpClient(options.origin, {options.timeout, options.timeout, options.ca_file});
  const std::string what = fmt::format("{} {}{}", method, options.origin, target);
  const bool has_body = !body.empty();
  CappedAnswer answer =
      SendCapped(*client,
                 MakeRequest(std::move(method), target, {{"Accept", "application/json"}},
                             std::move(body), has_body ? "application/yaml" : ""),
                 options.max_answer_bytes);
  if (answer.over_cap) return AnswerOverCap(what, options.max_answer_bytes);
  httplib::Result& res = answer.result;
  if (!res) {
    // A factory that hangs reads as httplib's "Failed to read connection": say what it means.
    const bool timed_out =
        res.error() == httplib::Error::Read || res.error() == httplib::Error::ConnectionTimeout;
    return NoAnswerError(
        res.error(),
        timed_out ? fmt::format("{}: no answer within {}ms", what, options.timeout.count()) : what);
  }
  if (const HttpOutcome outcome = HttpOutcome::Of(res->status, res->headers);
      !outcome.Succeeded()) {
    // The factory's own message says what it refused (an unknown extension, say): its first
    // line, made safe for logs.
    const std::string said =
        core::MessageSafe(std::string_view(res->body).substr(0, res->body.find('\n')), 200);
    return outcome.Error(
        fmt::format("{}: HTTP {}{}{}", what, res->status, said.empty() ? "" : ": ", said));
  }
  return std::move(res->body);
}

absl::StatusOr<nlohmann::json> ParseJson(std::string_view body, std::string_view what) {
  nlohmann::json json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return absl::InternalError(fmt::format("{}: not JSON", what));
  return json;
}

}  // namespace

absl::StatusOr<std::string> SchematicIdOfAnswer(std::string_view body) {
  absl::StatusOr<nlohmann::json> json = ParseJson(body, "schematic answer");
  if (!json.ok()) return json.status();
  if (!json->is_object() || !json->contains("id") || !(*json)["id"].is_string()) {
    return absl::InternalError("schematic answer: no \"id\" string");
  }
  std::string id = (*json)["id"].get<std::string>();
  if (absl::Status s = core::CheckSchematicId(id); !s.ok()) {
    return absl::InternalError("schematic answer: the id " + std::string(s.message()));
  }
  return id;
}

absl::StatusOr<std::vector<core::Version>> VersionsOfAnswer(std::string_view body) {
  absl::StatusOr<nlohmann::json> json = ParseJson(body, "versions answer");
  if (!json.ok()) return json.status();
  if (!json->is_array()) return absl::InternalError("versions answer: not a list");
  std::vector<std::string> tags;
  for (const nlohmann::json& item : *json) {
    if (item.is_string()) tags.push_back(item.get<std::string>());
  }
  return registry::ReleaseTags(tags);
}

absl::StatusOr<std::vector<std::string>> ExtensionNamesOfAnswer(std::string_view body) {
  absl::StatusOr<nlohmann::json> json = ParseJson(body, "extensions answer");
  if (!json.ok()) return json.status();
  if (!json->is_array()) return absl::InternalError("extensions answer: not a list");
  std::vector<std::string> names;
  for (const nlohmann::json& item : *json) {
    if (!item.is_object() || !item.contains("name") || !item["name"].is_string()) {
      return absl::InternalError("extensions answer: an entry without a \"name\" string");
    }
    names.push_back(item["name"].get<std::string>());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

absl::StatusOr<std::string> CreateSchematic(const ImageFactoryOptions& options,
                                            std::string_view yaml) {
  absl::StatusOr<std::string> answer = Send(options, "POST", "/schematics", std::string(yaml));
  if (!answer.ok()) return answer.status();
  return SchematicIdOfAnswer(*answer);
}

absl::StatusOr<std::vector<core::Version>> FactoryVersions(const ImageFactoryOptions& options) {
  absl::StatusOr<std::string> answer = Send(options, "GET", "/versions");
  if (!answer.ok()) return answer.status();
  return VersionsOfAnswer(*answer);
}

absl::StatusOr<std::vector<core::Version>> FactoryBrokenVersions(
    const ImageFactoryOptions& options) {
  absl::StatusOr<std::string> answer = Send(options, "GET", "/versions?broken=true");
  if (!answer.ok()) return answer.status();
  return VersionsOfAnswer(*answer);
}

absl::StatusOr<releases::ReleaseList> FactoryReleaseSource::List(std::stop_token /*stop*/) {
  absl::StatusOr<std::vector<core::Version>> versions = FactoryVersions(options_);
  if (!versions.ok()) return versions.status();
  absl::StatusOr<std::vector<core::Version>> marked = FactoryBrokenVersions(options_);
  if (!marked.ok()) return marked.status();
  releases::ReleaseList list;
  list.listed = versions->size();
  for (const core::Version& v : *marked) {
    if (!std::binary_search(versions->begin(), versions->end(), v)) list.broken.push_back(v);
  }
  list.releases = *std::move(versions);
  return list;
}

absl::StatusOr<std::vector<std::string>> OfficialExtensions(const ImageFactoryOptions& options,
                                                            const core::Version& version) {
  absl::StatusOr<std::string> answer = Send(
      options, "GET", fmt::format("/version/{}/extensions/official", PercentEncode(version.Tag())));
  if (!answer.ok()) return answer.status();
  return ExtensionNamesOfAnswer(*answer);
}

}  // namespace tr::reconciler::factory
