#include "tests/forge/forge_test_support.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

namespace tr::forge_test {

std::string NodeModules() {
  const std::string dir = std::string(TR_SOURCE_DIR) + "/.cache/forge-npm/node_modules";
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/@octokit/webhooks"))
      << "npm test tools missing: run tests/forge/setup";
  return dir;
}

std::string PayloadPath(const std::string& name) {
  return std::string(TR_SOURCE_DIR) + "/tests/forge/payloads/" + name;
}

std::vector<nlohmann::json> SendWebhooks(const std::string& base_url, const std::string& secret,
                                         const std::string& forge, const std::string& event,
                                         const std::string& source, int repeat) {
  const std::string command = "node '" + std::string(TR_SOURCE_DIR) +
                              "/tests/forge/send_webhooks.mjs' '" + NodeModules() + "' '" +
                              base_url + "' '" + secret + "' " + forge + " '" + event + "' '" +
                              source + "' " + std::to_string(repeat);
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  std::vector<nlohmann::json> lines;
  if (!pipe) {
    ADD_FAILURE() << "cannot run node";
    return lines;
  }
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe.get()) != nullptr) {
    lines.push_back(nlohmann::json::parse(buffer));
  }
  EXPECT_EQ(::pclose(pipe.release()), 0) << command;
  return lines;
}

int ConnectLoopbackFrom(const char* source, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  if (::inet_pton(AF_INET, source, &from.sin_addr) != 1 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
    ::close(fd);
    return -1;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

int ConnectLoopback(int port) { return ConnectLoopbackFrom("127.0.0.1", port); }

bool SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

std::optional<std::string> ReadUntilClosed(int fd, Env::TimePoint deadline) {
  std::string out;
  char buffer[4096];
  while (Env::Default().Now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return out;
    out.append(buffer, static_cast<size_t>(n));
  }
  return std::nullopt;
}

std::unique_ptr<reconciler::forge::HttpForgeClient> FakeForgeClient(const FakeForge& fake,
                                                                    const std::string& forge,
                                                                    const std::string& token,
                                                                    RecordingTime& time,
                                                                    int per_minute) {
  reconciler::forge::ForgeClientOptions options;
  options.target = {reconciler::forge::FindApiDialect(forge), "acme/fleet"};
  options.api_url = fake.api_url();
  options.token = token;
  options.timeout = std::chrono::milliseconds(5000);
  options.content_requests_per_minute = per_minute;
  auto client = reconciler::forge::HttpForgeClient::Create(std::move(options), time);
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

}  // namespace tr::forge_test
