#include "reconciler/features/notify/json_format.h"

#include "core/api_version.h"
#include "core/timestamp.h"
#include "nlohmann/json.hpp"

namespace tr::reconciler::notify {

std::string JsonFormat::Render(const Notification& n, const std::string& delivery_id) const {
  // Like every document the reconciler writes, the body says what it is (CHANGELOG.md records
  // a change of its shape).
  nlohmann::json body{{"apiVersion", std::string(core::kApiVersion)},
                      {"kind", "Notification"},
                      {"id", delivery_id},
                      {"event", NotificationEventName(n.event)},
                      {"cluster", n.cluster},
                      {"phase", n.phase},
                      {"time", core::FormatTimestamp(n.at)}};
  auto put = [&body](const char* key, const std::string& value) {
    if (!value.empty()) body[key] = value;
  };
  put("message", n.message);
  put("node", n.node);
  put("progress", n.progress);
  put("commit", n.commit);
  if (!n.labels.empty()) body["labels"] = n.labels;  // what a receiver routes by
  body["talos"] = {{"current", n.talos_current}, {"target", n.talos_target}};
  body["kubernetes"] = {{"current", n.kubernetes_current}, {"target", n.kubernetes_target}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace tr::reconciler::notify
