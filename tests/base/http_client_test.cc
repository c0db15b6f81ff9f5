// The shared HTTP client set-up: what a request that got no answer means, and the client's
// settings against a real server on loopback (an answer's meaning: http_outcome_test.cc).
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
