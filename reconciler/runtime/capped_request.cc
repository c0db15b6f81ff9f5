#include "reconciler/runtime/capped_request.h"

#include <functional>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "base/http_client.h"
#include "fmt/format.h"

namespace tr::reconciler {
namespace {

using Send = std::function<httplib::Result(const httplib::Request&)>;

CappedAnswer Capped(const Send& send, httplib::Request request, size_t max_answer_bytes) {
  // Shared so the callbacks, copied into httplib's own request, write where we read.
  auto body = std::make_shared<std::string>();
  auto over_cap = std::make_shared<bool>(false);
  auto status = std::make_shared<int>(-1);
  request.response_handler = [over_cap, status, max_answer_bytes](const httplib::Response& res) {
    *status = res.status;
    uint64_t length = 0;
    if (res.has_header("Content-Length") &&
        absl::SimpleAtoi(res.get_header_value("Content-Length"), &length) &&
        length > max_answer_bytes) {
      *over_cap = true;  // refused before a byte of the body is read
      return false;
    }
    return true;
  };
  request.content_receiver = [body, over_cap, max_answer_bytes](const char* data, size_t size,
                                                                uint64_t, uint64_t) {
    if (size > max_answer_bytes - body->size()) {
      *over_cap = true;
      return false;
    }
    body->append(data, size);
    return true;
  };
  CappedAnswer answer{send(request), *over_cap, *status};
  if (answer.result && !answer.over_cap) {
    answer.result->body = std::move(*body);
    answer.status = answer.result->status;  // also of a 204: httplib asks no handler then
  }
  return answer;
}

}  // namespace

CappedAnswer SendCapped(httplib::Client& client, httplib::Request request,
                        size_t max_answer_bytes) {
  return Capped([&client](const httplib::Request& r) { return client.send(r); }, std::move(request),
                max_answer_bytes);
}

CappedAnswer SendCapped(httplib::ClientImpl& client, httplib::Request request,
                        size_t max_answer_bytes) {
  return Capped([&client](const httplib::Request& r) { return client.send(r); }, std::move(request),
                max_answer_bytes);
}

httplib::Request MakeRequest(std::string method, std::string path, httplib::Headers headers,
                             std::string body, std::string_view content_type) {
  httplib::Request request;
  request.method = std::move(method);
  request.path = std::move(path);
  request.headers = std::move(headers);
  if (!request.has_header("User-Agent")) request.headers.emplace("User-Agent", kUserAgent);
  if (!body.empty() && !content_type.empty()) {
    request.headers.emplace("Content-Type", std::string(content_type));
  }
  request.body = std::move(body);
  return request;
}

HttpOutcome OutcomeOf(const CappedAnswer& answer) {
  // Over the cap the head was read, but httplib keeps no headers with its error.
  if (!answer.result) return HttpOutcome::Of(answer.status);
  return HttpOutcome::Of(answer.status, answer.result->headers);
}

absl::Status AnswerOverCap(std::string_view what, size_t max_answer_bytes) {
  const std::string mib = max_answer_bytes % kMiB == 0 && max_answer_bytes > 0
                              ? fmt::format(" ({} MiB)", max_answer_bytes / kMiB)
                              : "";
  return absl::ResourceExhaustedError(fmt::format(
      "{}: the answer is larger than the cap of {} bytes{}", what, max_answer_bytes, mib));
}

}  // namespace tr::reconciler
