// The one way the simulator's HTTP servers (Kubernetes API, control endpoint) answer with JSON.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>

namespace tr::sim {

// Answers `code` with `body` as application/json (`indent` as nlohmann's dump takes it: -1 on
// one line).
inline void SendJson(httplib::Response& res, int code, const nlohmann::json& body,
                     int indent = -1) {
  res.status = code;
  res.set_content(body.dump(indent), "application/json");
}

}  // namespace tr::sim
