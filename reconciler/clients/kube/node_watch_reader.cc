#include "reconciler/clients/kube/node_watch_reader.h"

#include "base/http_client.h"
#include "base/http_outcome.h"
#include "base/percent_encoding.h"
#include "fmt/format.h"
#include "reconciler/clients/kube/kube_json.h"

namespace tr::reconciler::kube {
namespace {

constexpr char kWhat[] = "kubernetes watch nodes";

// An ERROR event (or a line that is no event) as the status KubeClient::WatchNodes returns.
absl::Status WatchLineError(const NodeWatchLine& line) {
  const HttpOutcome outcome = HttpOutcome::Of(line.error_code);
  const std::string text =
      fmt::format("{}: {}{}", kWhat, line.error_message,
                  line.error_reason.empty() ? "" : " (" + line.error_reason + ")");
  if (outcome.Gone()) return absl::OutOfRangeError(text + ": list the nodes again");
  if (line.error_code == 0) return absl::InternalError(text);
  return outcome.Error(text);
}

}  // namespace

absl::Status ReadNodeWatch(httplib::SSLClient& client, const NodeWatchRequest& request,
                           const std::function<bool(const NodeWatchEvent&)>& on_event) {
  const auto cancelled = [&] {
    return request.stop.stop_requested() || request.shutdown.stop_requested();
  };
  // httplib's stop() shuts a request's socket while it waits for bytes; a stop before the
  // request began is seen by the checks below.
  std::stop_callback on_stop(request.stop, [&client] { client.stop(); });
  std::stop_callback on_shutdown(request.shutdown, [&client] { client.stop(); });
  if (cancelled()) return absl::CancelledError(fmt::format("{}: stopped", kWhat));
  client.set_read_timeout(request.timeout + std::chrono::seconds(30));

  const std::string path = fmt::format(
      "/api/v1/nodes?watch=1&allowWatchBookmarks=true&timeoutSeconds={}&resourceVersion={}",
      request.timeout.count(), PercentEncode(request.resource_version));
  int status = 0;
  std::string pending;
  absl::Status verdict;
  bool caller_done = false;
  const auto on_response = [&status](const httplib::Response& res) {
    status = res.status;
    return HttpOutcome::Of(status).Succeeded();
  };
  const auto on_bytes = [&](const char* data, size_t size) {
    if (cancelled()) return false;
    pending.append(data, size);
    for (size_t eol; (eol = pending.find('\n')) != std::string::npos; pending.erase(0, eol + 1)) {
      const NodeWatchLine line = NodeWatchLineFromJson(std::string_view(pending).substr(0, eol));
      if (!line.event) {
        verdict = WatchLineError(line);
        return false;
      }
      if (!on_event(*line.event)) {
        caller_done = true;
        return false;
      }
    }
    if (pending.size() > request.max_line_bytes) {
      verdict = absl::ResourceExhaustedError(
          fmt::format("{}: an event longer than {} bytes", kWhat, request.max_line_bytes));
      return false;
    }
    return true;
  };
  const httplib::Result res = client.Get(path, httplib::Headers{}, on_response, on_bytes);
  if (caller_done) return absl::OkStatus();
  if (!verdict.ok()) return verdict;
  if (cancelled()) return absl::CancelledError(fmt::format("{}: stopped", kWhat));
  if (const HttpOutcome outcome = HttpOutcome::Of(status); status != 0 && !outcome.Succeeded()) {
    const std::string text = fmt::format("{}: HTTP {}", kWhat, status);
    return outcome.Gone() ? absl::OutOfRangeError(text + ": list the nodes again")
                          : outcome.Error(text);
  }
  if (!res) return NoAnswerError(res.error(), kWhat);
  return absl::OkStatus();  // the server ended the watch: watch again from the last version
}

}  // namespace tr::reconciler::kube
