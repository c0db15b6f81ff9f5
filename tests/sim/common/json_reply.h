// The one way the simulator's HTTP servers (Kubernetes API, control endpoint) answer with JSON.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <string>

namespace tr::sim {

// Answers `code` with `body` as application/json (`indent` as nlohmann's dump takes it: -1 on
// one line).
inline void SendJson(httplib::Response& res, int code, const nlohmann::json& body,
                     int indent = -1) {
  res.status = code;
  res.set_content(body.dump(indent), "application/json");
}

// Answers `code` with a Kubernetes Status of Failure (`reason`, `message`; `details` naming the
// object when `name` is given), as the API server does.
inline void SendKubeFailure(httplib::Response& res, int code, const std::string& reason,
                            const std::string& message, const std::string& kind = "",
                            const std::string& name = "") {
  nlohmann::json status = {
      {"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
      {"status", "Failure"}, {"message", message}, {"reason", reason},
      {"code", code}};
  if (!name.empty()) status["details"] = {{"name", name}, {"kind", kind}};
  SendJson(res, code, status);
}

}  // namespace tr::sim
