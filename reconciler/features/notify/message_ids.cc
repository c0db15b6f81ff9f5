#include "reconciler/features/notify/message_ids.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"
#include "reconciler/runtime/private_files.h"

namespace tr::reconciler::notify {

namespace fs = std::filesystem;

std::string RolloutKey(const Notification& n) { return n.cluster + "@" + n.commit; }

absl::Status MessageIds::Load() {
  ids_.clear();
  std::error_code ec;
  if (!fs::exists(file_, ec)) return absl::OkStatus();
  std::ifstream in(file_);
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_array()) {
    return absl::DataLossError(file_.filename().string() + " is not a list of message ids");
  }
  for (const auto& entry : doc) {
    if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string()) {
      ids_.emplace_back(entry[0].get<std::string>(), entry[1].get<std::string>());
    }
  }
  return absl::OkStatus();
}

std::optional<std::string> MessageIds::Find(const std::string& rollout) const {
  for (const auto& [key, id] : ids_) {
    if (key == rollout) return id;
  }
  return std::nullopt;
}

absl::Status MessageIds::Put(const std::string& rollout, const std::string& id) {
  std::erase_if(ids_, [&](const auto& entry) { return entry.first == rollout; });
  ids_.emplace_back(rollout, id);
  if (ids_.size() > kMaxMessageIds) ids_.erase(ids_.begin());
  return Save();
}

absl::Status MessageIds::Forget(const std::string& rollout) {
  std::erase_if(ids_, [&](const auto& entry) { return entry.first == rollout; });
  return Save();
}

absl::Status MessageIds::Save() const {
  nlohmann::json doc = nlohmann::json::array();
  for (const auto& [key, id] : ids_) doc.push_back({key, id});
  const fs::path tmp = file_.string() + ".tmp";
  if (absl::Status s = CreatePrivateFile(tmp); !s.ok()) return s;
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (!out.flush()) return absl::InternalError("cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, file_, ec);
  if (ec) return absl::InternalError("cannot rename " + tmp.string() + ": " + ec.message());
  return absl::OkStatus();
}

}  // namespace tr::reconciler::notify
