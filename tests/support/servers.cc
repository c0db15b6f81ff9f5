#include "tests/support/servers.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/text.h"
#include "fmt/format.h"
#include "gitsource/ssh_wire.h"
#include "tests/support/process.h"

namespace tr::gitsource::testing {
namespace fs = std::filesystem;

LoopbackListener::LoopbackListener(std::function<void(int)> on_connection)
    : on_connection_(std::move(on_connection)) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      listen(listen_fd_, 64) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ADD_FAILURE() << "cannot listen on 127.0.0.1";
  }
  port_ = ntohs(address.sin_port);
  stop_fd_ = eventfd(0, EFD_CLOEXEC);
  thread_ = std::thread([this] { AcceptLoop(); });
}

LoopbackListener::~LoopbackListener() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = write(stop_fd_, &one, sizeof one);
  thread_.join();
  close(listen_fd_);
  close(stop_fd_);
}

void LoopbackListener::AcceptLoop() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents != 0) return;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    on_connection_(fd);
    std::lock_guard lock(mu_);
    ++accepted_;
    accepted_cv_.notify_all();
  }
}

bool LoopbackListener::WaitForConnections(int count, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return accepted_cv_.wait_for(lock, timeout, [&] { return accepted_ >= count; });
}

InetdServer::InetdServer(std::vector<std::string> argv, fs::path log)
    : argv_(std::move(argv)), log_(std::move(log)) {
  listener_ = std::make_unique<LoopbackListener>([this](int fd) {
    const int log_fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    absl::StatusOr<Subprocess> child =
        Subprocess::Spawn({argv_, HermeticEnvironment(), fd, fd, log_fd, {}});
    close(fd);
    if (log_fd >= 0) close(log_fd);
    if (!child.ok()) {
      ADD_FAILURE() << child.status();
      return;
    }
    std::lock_guard lock(mu_);
    children_.push_back(*std::move(child));
  });
}

InetdServer::~InetdServer() {
  listener_.reset();
  std::lock_guard lock(mu_);
  for (Subprocess& child : children_) {
    if (!child.WaitFor(std::chrono::milliseconds(2000)).has_value()) child.Signal(SIGKILL);
  }
  children_.clear();
}

GitDaemon::GitDaemon(const fs::path& root)
    : root_(root),
      server_({"git", "daemon", "--inetd", "--base-path=" + root.string(), "--export-all",
               "--enable=receive-pack", "--informative-errors", root.string()},
              root / "git-daemon.log") {}

std::string GitDaemon::Url(const std::string& name) const {
  return fmt::format("git://127.0.0.1:{}/{}.git", server_.port(), name);
}

namespace {

std::string PublicKeyOf(const fs::path& key) {
  std::string line = ReadFile(fs::path(key.string() + ".pub"));
  // "ssh-ed25519 AAAA… comment" -> "ssh-ed25519 AAAA…"
  const std::size_t first = line.find(' ');
  const std::size_t second = line.find(' ', first + 1);
  return line.substr(0, second == std::string::npos ? line.find('\n') : second);
}

}  // namespace

SshServer::SshServer(const fs::path& dir)
    : dir_(dir), client_key_(dir / "client_key"), log_(dir / "sshd.log") {
  fs::create_directories(dir);
  MustRun({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "host", "-f",
           (dir / "host_key").string()});
  MustRun(
      {"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "client", "-f", client_key_.string()});
  WriteFile(dir / "authorized_keys", ReadFile(fs::path(client_key_.string() + ".pub")));
  WriteFile(dir / "sshd_config",
            fmt::format("HostKey {}\nAuthorizedKeysFile {}\nStrictModes no\n"
                        "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                        "PubkeyAuthentication yes\nUsePAM no\nPidFile none\n"
                        "PermitRootLogin prohibit-password\nLogLevel VERBOSE\n",
                        (dir / "host_key").string(), (dir / "authorized_keys").string()));
  if (geteuid() == 0) {
    // Privilege separation as root needs this directory (the service normally makes it).
    std::error_code ec;
    fs::create_directories("/run/sshd", ec);
    fs::permissions("/run/sshd", fs::perms(0755), ec);
  }
  server_ = std::make_unique<InetdServer>(
      std::vector<std::string>{"/usr/sbin/sshd", "-i", "-f", (dir / "sshd_config").string(), "-E",
                               log_.string()},
      dir / "sshd.stderr");
}

std::string SshServer::Url(const fs::path& repo) const {
  return fmt::format("ssh://{}@127.0.0.1:{}{}", CurrentUser(), server_->port(), repo.string());
}

std::string SshServer::KnownHostsLine() const {
  return fmt::format("[127.0.0.1]:{} {}\n", server_->port(), PublicKeyOf(dir_ / "host_key"));
}

SmartHttpServer::SmartHttpServer(const fs::path& root, const fs::path& dir, HttpOptions options)
    : root_(root), options_(std::move(options)) {
  if (options_.tls) {
    fs::create_directories(dir);
    certificate_ = dir / "cert.pem";
    const fs::path key = dir / "key.pem";
    // For the address, not a name, so no resolver is needed. IP:127.0.0.1 is the proper entry;
    // Debian's libgit2 verifies with mbedTLS 2.28, which compares the host only with dNSName
    // entries as text, hence DNS:127.0.0.1 as well.
    MustRun({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
             "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:127.0.0.1", "-keyout",
             key.string(), "-out", certificate_.string()});
    server_ = std::make_unique<httplib::SSLServer>(certificate_.c_str(), key.c_str());
  } else {
    server_ = std::make_unique<httplib::Server>();
  }
  const auto handler = [this](const httplib::Request& request, httplib::Response& response) {
    Handle(request, response);
  };
  server_->Get(".*", handler);
  server_->Post(".*", handler);
  server_->set_tcp_nodelay(true);  // no answer held by Nagle's algorithm (40 ms)
  port_ = server_->bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

SmartHttpServer::~SmartHttpServer() {
  server_->stop();
  thread_.join();
}

std::string SmartHttpServer::Url(const std::string& name) const {
  return fmt::format("{}://127.0.0.1:{}/{}.git", options_.tls ? "https" : "http", port_, name);
}

std::vector<std::string> SmartHttpServer::Requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

int SmartHttpServer::CountRequests(const std::string& needle) const {
  std::lock_guard lock(mu_);
  int count = 0;
  for (const std::string& r : requests_) count += r.find(needle) != std::string::npos ? 1 : 0;
  return count;
}

void SmartHttpServer::Handle(const httplib::Request& request, httplib::Response& response) {
  {
    std::lock_guard lock(mu_);
    requests_.push_back(request.method + " " + request.target);
  }
  if (!options_.user.empty()) {
    const std::string expected =
        "Basic " + EncodeBase64(options_.user + ":" + options_.password, /*pad=*/true);
    if (request.get_header_value("Authorization") != expected) {
      response.status = 401;
      response.set_header("WWW-Authenticate", "Basic realm=\"git\"");
      response.set_content("authentication required\n", "text/plain");
      return;
    }
  }
  const std::size_t question = request.target.find('?');
  RunOptions cgi;
  cgi.input = request.body;
  cgi.extra_env = {
      "GIT_PROJECT_ROOT=" + root_.string(),
      "GIT_HTTP_EXPORT_ALL=1",
      "REQUEST_METHOD=" + request.method,
      "PATH_INFO=" + request.path,
      "QUERY_STRING=" + (question == std::string::npos ? "" : request.target.substr(question + 1)),
      "CONTENT_TYPE=" + request.get_header_value("Content-Type"),
      fmt::format("CONTENT_LENGTH={}", request.body.size()),
      "REMOTE_USER=" + (options_.user.empty() ? std::string("anonymous") : options_.user),
      "REMOTE_ADDR=127.0.0.1",
  };
  if (request.has_header("Git-Protocol")) {
    cgi.extra_env.push_back("GIT_PROTOCOL=" + request.get_header_value("Git-Protocol"));
  }
  const ProcessResult result = RunCommand({"git", "http-backend"}, cgi);
  std::size_t header_end = result.out.find("\r\n\r\n");
  std::size_t body_start = header_end + 4;
  if (header_end == std::string::npos) {
    header_end = result.out.find("\n\n");
    body_start = header_end + 2;
  }
  if (header_end == std::string::npos) {
    response.status = 500;
    response.set_content(result.err, "text/plain");
    return;
  }
  std::string content_type = "application/octet-stream";
  response.status = 200;
  for (std::string_view line :
       core::Split(std::string_view(result.out).substr(0, header_end), '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string name(line.substr(0, colon));
    std::string value(line.substr(colon + 1));
    value.erase(0, value.find_first_not_of(' '));
    if (name == "Status") {
      response.status = std::stoi(value);
    } else if (name == "Content-Type") {
      content_type = value;
    } else {
      response.set_header(name.c_str(), value);
    }
  }
  response.set_content(result.out.substr(body_start), content_type.c_str());
}

HangingServer::HangingServer()
    : listener_(std::make_unique<LoopbackListener>([this](int fd) {
        std::lock_guard lock(mu_);
        held_.push_back(fd);
      })) {}

HangingServer::~HangingServer() {
  listener_.reset();
  for (int fd : held_) close(fd);
}

}  // namespace tr::gitsource::testing
