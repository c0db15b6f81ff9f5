#include "tests/sim/api/kube_paging.h"

#include <httplib.h>

#include <algorithm>

#include "core/base64.h"
#include "fmt/format.h"

namespace tr::sim {
namespace {

using nlohmann::json;

constexpr size_t kSnapshotsKept = 4;

// The etcd key order: "<namespace>/<name>", or "<name>" of a cluster-scoped object.
std::string EtcdKey(const json& obj) {
  const json& meta = obj["metadata"];
  const std::string ns = meta.value("namespace", "");
  return ns.empty() ? meta.value("name", "") : ns + "/" + meta.value("name", "");
}

std::string EncodeToken(uint64_t rv, const std::string& start) {
  std::string text = core::EncodeBase64(
      json{{"v", "meta.k8s.io/v1"}, {"rv", rv}, {"start", start + std::string(1, '\0')}}.dump());
  for (char& c : text) c = c == '+' ? '-' : c == '/' ? '_' : c;
  text.erase(std::remove(text.begin(), text.end(), '='), text.end());
  return text;
}

// {rv, start key} of a token; nullopt when it does not decode.
std::optional<std::pair<uint64_t, std::string>> DecodeToken(std::string text) {
  for (char& c : text) c = c == '-' ? '+' : c == '_' ? '/' : c;
  while (text.size() % 4 != 0) text += '=';
  auto raw = core::DecodeBase64(text);
  if (!raw) return std::nullopt;
  json token = json::parse(*raw, nullptr, false);
  if (!token.is_object() || token.value("v", "") != "meta.k8s.io/v1" ||
      !token.contains("rv") || !token["rv"].is_number_unsigned() || !token.contains("start") ||
      !token["start"].is_string()) {
    return std::nullopt;
  }
  std::string start = token["start"];
  if (!start.empty() && start.back() == '\0') start.pop_back();
  return std::make_pair(token["rv"].get<uint64_t>(), start);
}

json PagingRefusal(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
          {"status", "Failure"}, {"message", message}, {"reason", reason},
          {"code", code}};
}

}  // namespace

ListPager::Page ListPager::Take(const httplib::Request& req, json items, uint64_t rv) {
  const std::string label = req.get_param_value("labelSelector");
  const std::string field = req.get_param_value("fieldSelector");
  const std::string token = req.get_param_value("continue");
  long limit = 0;
  if (req.has_param("limit")) limit = std::strtol(req.get_param_value("limit").c_str(), nullptr, 10);
  Page page;
  if (token.empty() && limit <= 0) {
    page.items = std::move(items);
    page.metadata = {{"resourceVersion", std::to_string(rv)}};
    return page;
  }
  const std::string request_key = req.path + "?" + label + "&" + field;
  std::shared_ptr<const json> snapshot;
  std::string start;
  if (token.empty()) {
    std::sort(items.begin(), items.end(),
              [](const json& a, const json& b) { return EtcdKey(a) < EtcdKey(b); });
    snapshot = std::make_shared<const json>(std::move(items));
  } else {
    auto decoded = DecodeToken(token);
    if (!decoded) {
      page.code = 400;
      page.items = PagingRefusal(400, "BadRequest",
                           "continue key is not valid: incorrect encoded start resourceVersion "
                           "(version meta.k8s.io/v1)");
      return page;
    }
    std::lock_guard lock(mu_);
    for (const auto& s : snapshots_) {
      if (s.rv == decoded->first && s.key == fmt::format("{} {}", s.rv, request_key)) {
        snapshot = s.items;
      }
    }
    if (snapshot == nullptr) {
      page.code = 410;
      page.items = PagingRefusal(
          410, "Expired",
          "The provided continue parameter is too old to display a consistent list result. You "
          "can start a new list without the continue parameter.");
      return page;
    }
    rv = decoded->first;
    start = decoded->second;
  }
  // The page: the items after `start`, at most `limit` of them.
  auto first = std::find_if(snapshot->begin(), snapshot->end(),
                            [&](const json& obj) { return start.empty() || EtcdKey(obj) > start; });
  const size_t left = static_cast<size_t>(snapshot->end() - first);
  const size_t take = limit > 0 ? std::min(left, static_cast<size_t>(limit)) : left;
  page.items = json::array();
  for (auto it = first; it != first + static_cast<std::ptrdiff_t>(take); ++it) {
    page.items.push_back(*it);
  }
  page.metadata = {{"resourceVersion", std::to_string(rv)}};
  if (take < left) {
    page.metadata["continue"] = EncodeToken(rv, EtcdKey(page.items.back()));
    if (label.empty() && field.empty()) page.metadata["remainingItemCount"] = left - take;
    std::lock_guard lock(mu_);
    const std::string key = fmt::format("{} {}", rv, request_key);
    if (std::none_of(snapshots_.begin(), snapshots_.end(),
                     [&](const Snapshot& s) { return s.key == key; })) {
      snapshots_.push_back({.key = key, .rv = rv, .items = snapshot});
      if (snapshots_.size() > kSnapshotsKept) snapshots_.pop_front();
    }
  }
  return page;
}

}  // namespace tr::sim
