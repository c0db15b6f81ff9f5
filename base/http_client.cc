#include "base/http_client.h"

#include <utility>

namespace tr {

std::unique_ptr<httplib::Client> NewHttpClient(const std::string& origin,
                                               const HttpClientOptions& options) {
  auto client = std::make_unique<httplib::Client>(origin);
  SetHttpConnection(*client, options.connect_timeout, options.io_timeout);
  client->set_follow_location(false);
  client->enable_server_certificate_verification(true);
  if (!options.ca_file.empty()) client->set_ca_cert_path(options.ca_file.string());
  return client;
}

absl::Status NoAnswerError(httplib::Error error, std::string_view what) {
  std::string message = std::string(what) + ": " + httplib::to_string(error);
  if (error == httplib::Error::Read || error == httplib::Error::Write ||
      error == httplib::Error::ConnectionTimeout) {
    return absl::DeadlineExceededError(std::move(message));
  }
  return absl::UnavailableError(std::move(message));
}

}  // namespace tr
