// The shared HTTP client set-up: what a request that got no answer and an answer that is not
// 2xx mean, and the client's settings against a real server on loopback.
#include "base/http_client.h"

#include <gtest/gtest.h>

#include <thread>

namespace tr {
namespace {

TEST(NoAnswerErrorTest, ATimeoutIsDeadlineExceededAnythingElseUnavailable) {
  const struct {
    httplib::Error error;
    absl::StatusCode code;
  } cases[] = {
      {httplib::Error::Read, absl::StatusCode::kDeadlineExceeded},
      {httplib::Error::Write, absl::StatusCode::kDeadlineExceeded},
      {httplib::Error::ConnectionTimeout, absl::StatusCode::kDeadlineExceeded},
      {httplib::Error::Connection, absl::StatusCode::kUnavailable},
      {httplib::Error::SSLServerVerification, absl::StatusCode::kUnavailable},
  };
  for (const auto& c : cases) {
    const absl::Status status = NoAnswerError(c.error, "GET https://registry.test/v2/");
    EXPECT_EQ(status.code(), c.code) << httplib::to_string(c.error);
    EXPECT_EQ(status.message(), "GET https://registry.test/v2/: " + httplib::to_string(c.error));
  }
}

TEST(HttpAnswerErrorTest, EachCodeSaysWhatTheCallerShouldDo) {
  const struct {
    int status;
    absl::StatusCode code;
  } cases[] = {
      {200, absl::StatusCode::kOk},
      {204, absl::StatusCode::kOk},
      {302, absl::StatusCode::kInternal},
      {400, absl::StatusCode::kInvalidArgument},
      {401, absl::StatusCode::kUnauthenticated},
      {403, absl::StatusCode::kPermissionDenied},
      {404, absl::StatusCode::kNotFound},
      {409, absl::StatusCode::kAborted},
      {422, absl::StatusCode::kInvalidArgument},
      {429, absl::StatusCode::kResourceExhausted},
      {500, absl::StatusCode::kUnavailable},
      {503, absl::StatusCode::kUnavailable},
      {599, absl::StatusCode::kUnavailable},
      {600, absl::StatusCode::kInternal},
      {0, absl::StatusCode::kInternal},
  };
  for (const auto& c : cases) {
    const std::string message = "GET /v2/: HTTP " + std::to_string(c.status);
    const absl::Status status = HttpAnswerError(c.status, message);
    EXPECT_EQ(status.code(), c.code) << c.status;
    EXPECT_EQ(status.message(), status.ok() ? "" : message);
  }
}

TEST(NewHttpClientTest, DoesNotFollowRedirects) {
  httplib::Server server;
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_redirect("/elsewhere");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::jthread listener([&] { server.listen_after_bind(); });
  auto client = NewHttpClient("http://127.0.0.1:" + std::to_string(port), {});
  const httplib::Result res = client->Get("/");
  server.stop();
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 302);
}

}  // namespace
}  // namespace tr
