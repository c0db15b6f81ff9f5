// Reads one watch of Nodes (GET /api/v1/nodes?watch=1) on an HTTPS client of its own: the
// stream's lines decoded as they come (kube_json.h's NodeWatchLineFromJson) and handed on, the
// end told as KubeClient::WatchNodes documents it. The watch asks for bookmarks, so a quiet
// cluster still proves the stream alive, and for the server to end it at `timeout`; reading
// gives up 30 s after that.
//
// Thread-safety: one call per client at a time; the stop tokens may fire from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <stop_token>
#include <string>

#include "absl/status/status.h"
#include "httplib.h"
#include "reconciler/clients/kube/kube_client.h"

namespace tr::reconciler::kube {

struct NodeWatchRequest {
  std::string resource_version;
  std::chrono::seconds timeout{300};
  std::stop_token stop;                     // the caller's: Cancelled
  std::stop_token shutdown;                 // the process's: Cancelled
  size_t max_line_bytes = size_t{4} << 20;  // one event longer than this: ResourceExhausted
};

absl::Status ReadNodeWatch(httplib::SSLClient& client, const NodeWatchRequest& request,
                           const std::function<bool(const NodeWatchEvent&)>& on_event);

}  // namespace tr::reconciler::kube
