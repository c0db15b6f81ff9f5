// Test support: real Git servers on loopback, started per test on ephemeral ports.
//
//  - GitDaemon: `git daemon --inetd` for each connection (git://, pushes enabled).
//  - SshServer: Debian's sshd in inetd mode (`sshd -i`) with its own host key, config and
//    authorized_keys, unprivileged when the tests are (as root it needs /run/sshd, which
//    it creates).
//  - SmartHttpServer: cpp-httplib in front of `git http-backend` (CGI), optionally with
//    TLS and HTTP basic auth, logging every request.
//  - HangingServer: accepts connections and never says a word.
//
// Each owns its listening socket from construction (port 0), so it is ready at once.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gitsource/subprocess.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace tr::gitsource::testing {

// Listens on 127.0.0.1 (ephemeral port); hands each accepted connection to `on_connection`,
// which takes ownership of the descriptor.
class LoopbackListener {
 public:
  explicit LoopbackListener(std::function<void(int)> on_connection);
  ~LoopbackListener();
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;

  int port() const { return port_; }
  // Waits until `count` connections were accepted or `timeout` passed; returns whether.
  bool WaitForConnections(int count, std::chrono::milliseconds timeout);

 private:
  void AcceptLoop();

  std::function<void(int)> on_connection_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;
  int port_ = 0;
  std::mutex mu_;
  std::condition_variable accepted_cv_;
  int accepted_ = 0;
  std::thread thread_;
};

// Runs `argv` per connection with the connection as stdin and stdout (inetd style).
class InetdServer {
 public:
  InetdServer(std::vector<std::string> argv, std::filesystem::path log);
  ~InetdServer();
  int port() const { return listener_->port(); }

 private:
  std::vector<std::string> argv_;
  std::filesystem::path log_;
  std::mutex mu_;
  std::vector<Subprocess> children_;
  std::unique_ptr<LoopbackListener> listener_;  // last: stops before the rest goes
};

class GitDaemon {
 public:
  // Serves the bare repositories under `root`.
  explicit GitDaemon(const std::filesystem::path& root);
  // git://127.0.0.1:<port>/<name>.git
  std::string Url(const std::string& name) const;

 private:
  std::filesystem::path root_;
  InetdServer server_;
};

class SshServer {
 public:
  // Keys, config and logs go to `dir`.
  explicit SshServer(const std::filesystem::path& dir);
  // ssh://<user>@127.0.0.1:<port><repo>
  std::string Url(const std::filesystem::path& repo) const;
  // "[127.0.0.1]:<port> ssh-ed25519 AAAA…": the line a correct known_hosts file holds.
  std::string KnownHostsLine() const;
  const std::filesystem::path& client_key() const { return client_key_; }
  const std::filesystem::path& log() const { return log_; }

 private:
  std::filesystem::path dir_;
  std::filesystem::path client_key_;
  std::filesystem::path log_;
  std::unique_ptr<InetdServer> server_;
};

struct HttpOptions {
  bool tls = false;
  std::string user;  // basic auth required when set
  std::string password;
};

class SmartHttpServer {
 public:
  // Serves the bare repositories under `root`; TLS material goes to `dir`.
  SmartHttpServer(const std::filesystem::path& root, const std::filesystem::path& dir,
                  HttpOptions options = {});
  ~SmartHttpServer();
  // http[s]://<host>:<port>/<name>.git
  std::string Url(const std::string& name) const;
  // The certificate to trust (TLS only).
  const std::filesystem::path& certificate() const { return certificate_; }
  // "GET /x.git/info/refs?service=git-upload-pack", "POST /x.git/git-upload-pack", …
  std::vector<std::string> Requests() const;
  int CountRequests(const std::string& needle) const;

 private:
  // Checks basic auth, then runs `git http-backend` as a CGI for the request.
  void Handle(const httplib::Request& request, httplib::Response& response);

  std::filesystem::path root_;
  HttpOptions options_;
  std::filesystem::path certificate_;
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

class HangingServer {
 public:
  HangingServer();
  ~HangingServer();
  int port() const { return listener_->port(); }
  bool WaitForConnections(int count, std::chrono::milliseconds timeout) {
    return listener_->WaitForConnections(count, timeout);
  }

 private:
  std::mutex mu_;
  std::vector<int> held_;
  std::unique_ptr<LoopbackListener> listener_;
};

}  // namespace tr::gitsource::testing
