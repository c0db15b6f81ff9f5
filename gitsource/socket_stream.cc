#include "gitsource/socket_stream.h"

#include <fcntl.h>
#include <git2.h>
#include <git2/sys/stream.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "base/thread_name.h"
#include "fmt/format.h"
#include "gitsource/network_operation.h"

namespace tr::gitsource {
namespace {

// A name lookup runs on its own thread (getaddrinfo cannot be interrupted); the caller waits
// on `done_pipe` through the operation and abandons the lookup at its deadline.
struct Lookup {
  int done_pipe[2] = {-1, -1};
  int rc = 0;
  addrinfo* result = nullptr;
  ~Lookup() {
    if (result != nullptr) freeaddrinfo(result);
    for (int fd : done_pipe)
      if (fd >= 0) close(fd);
  }
};

struct AddrInfoFree {
  void operator()(addrinfo* info) const { freeaddrinfo(info); }
};
using AddrInfoPtr = std::unique_ptr<addrinfo, AddrInfoFree>;

// Resolves `host`, waiting at most until the operation's deadline. Sets a libgit2 error and
// returns null on failure.
AddrInfoPtr Resolve(const std::string& host, const std::string& port, NetworkOperation& op) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* numeric = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &numeric) == 0) return AddrInfoPtr(numeric);

  auto lookup = std::make_shared<Lookup>();
  if (pipe2(lookup->done_pipe, O_CLOEXEC) != 0) {
    git_error_set_str(GIT_ERROR_OS, "cannot create a pipe for name resolution");
    return nullptr;
  }
  std::thread([lookup, host, port] {
    NameThisThread("dns-lookup");
    addrinfo by_name{};
    by_name.ai_socktype = SOCK_STREAM;
    by_name.ai_flags = AI_ADDRCONFIG;
    lookup->rc = getaddrinfo(host.c_str(), port.c_str(), &by_name, &lookup->result);
    const char done = 1;
    [[maybe_unused]] const ssize_t n = write(lookup->done_pipe[1], &done, 1);
  }).detach();
  if (!op.WaitReady(lookup->done_pipe[0], POLLIN)) {
    git_error_set_str(GIT_ERROR_NET, fmt::format("resolving {} did not finish", host).c_str());
    return nullptr;
  }
  if (lookup->rc != 0) {
    git_error_set_str(GIT_ERROR_NET,
                      fmt::format("cannot resolve {}: {}", host, gai_strerror(lookup->rc)).c_str());
    return nullptr;
  }
  return AddrInfoPtr(std::exchange(lookup->result, nullptr));
}

constexpr std::size_t kWriteBuffer = 64 * 1024;

struct SocketState {
  std::string host;
  std::string port;
  int fd = -1;
  std::string pending;  // written, not sent yet
};

// libgit2 sees `parent`; the struct is standard-layout so the two pointers interconvert.
struct DeadlineSocket {
  git_stream parent;
  SocketState* state;
};

static_assert(std::is_standard_layout_v<DeadlineSocket>);

SocketState& StateOf(git_stream* stream) {
  return *reinterpret_cast<DeadlineSocket*>(stream)->state;
}

// Connects one address; returns the socket or -1 with `error` set (0 for a deadline).
int ConnectOne(const addrinfo& address, NetworkOperation& op, int& error) {
  const int fd = socket(address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                        address.ai_protocol);
  if (fd < 0) {
    error = errno;
    return -1;
  }
  if (connect(fd, address.ai_addr, address.ai_addrlen) == 0) return fd;
  if (errno != EINPROGRESS) {
    error = errno;
    close(fd);
    return -1;
  }
  if (!op.WaitReady(fd, POLLOUT)) {
    error = 0;
    close(fd);
    return -1;
  }
  socklen_t length = sizeof error;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = errno;
  if (error == 0) return fd;
  close(fd);
  return -1;
}

// Acknowledges what arrives at once rather than up to 40 ms later. A git server writes its
// negotiation answers a few bytes at a time with Nagle's algorithm on (git upload-pack's
// "ACK" lines), so its next write waits for our acknowledgement of the last, which Linux
// delays while we have nothing to send: 40 ms of every fetch went there. The kernel clears
// the flag as it goes, so it is set again after every read.
void AckAtOnce(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
}

int StreamConnect(git_stream* stream) {
  SocketState& s = StateOf(stream);
  return WithOperation([&s](NetworkOperation& op) {
    AddrInfoPtr addresses = Resolve(s.host, s.port, op);
    if (addresses == nullptr) return -1;
    int error = ECONNREFUSED;
    for (const addrinfo* a = addresses.get(); a != nullptr; a = a->ai_next) {
      s.fd = ConnectOne(*a, op, error);
      if (s.fd >= 0) {
        const int one = 1;
        setsockopt(s.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        AckAtOnce(s.fd);
        return 0;
      }
      if (error == 0) break;  // the deadline passed or the operation was cancelled
    }
    const std::string reason = error == 0 ? op.failure_detail() : std::string(std::strerror(error));
    git_error_set_str(
        GIT_ERROR_NET,
        fmt::format("failed to connect to {} port {}: {}", s.host, s.port, reason).c_str());
    return -1;
  });
}

// Sends what writes have gathered. libgit2 writes a pack a few bytes at a time (each object's
// header and data apart), which unbuffered cost a system call and a loopback segment each.
int Flush(SocketState& s) {
  return WithOperation([&](NetworkOperation& op) -> int {
    std::size_t done = 0;
    while (done < s.pending.size()) {
      const ssize_t sent =
          send(s.fd, s.pending.data() + done, s.pending.size() - done, MSG_NOSIGNAL);
      if (sent >= 0) {
        done += static_cast<std::size_t>(sent);
        continue;
      }
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        git_error_set_str(
            GIT_ERROR_NET,
            fmt::format("error writing to {}: {}", s.host, std::strerror(errno)).c_str());
        return -1;
      }
      if (!op.WaitReady(s.fd, POLLOUT)) {
        git_error_set_str(
            GIT_ERROR_NET,
            fmt::format("cannot write to {}: {}", s.host, op.failure_detail()).c_str());
        return -1;
      }
    }
    s.pending.clear();
    return 0;
  });
}

ssize_t StreamRead(git_stream* stream, void* data, size_t length) {
  SocketState& s = StateOf(stream);
  if (!s.pending.empty() && Flush(s) < 0) return -1;
  return WithOperation([&](NetworkOperation& op) -> ssize_t {
    while (true) {
      const ssize_t got = recv(s.fd, data, length, 0);
      if (got > 0) AckAtOnce(s.fd);
      if (got >= 0) return got;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        git_error_set_str(
            GIT_ERROR_NET,
            fmt::format("error reading from {}: {}", s.host, std::strerror(errno)).c_str());
        return -1;
      }
      if (!op.WaitReady(s.fd, POLLIN)) {
        git_error_set_str(GIT_ERROR_NET,
                          fmt::format("no data from {}: {}", s.host, op.failure_detail()).c_str());
        return -1;
      }
    }
  });
}

// Gathers; sent when the gathered bytes fill the buffer, before a read (the other side
// answers only what it was sent) and at close.
ssize_t StreamWrite(git_stream* stream, const char* data, size_t length, int /*flags*/) {
  SocketState& s = StateOf(stream);
  s.pending.append(data, length);
  if (s.pending.size() >= kWriteBuffer && Flush(s) < 0) return -1;
  return static_cast<ssize_t>(length);
}

int StreamClose(git_stream* stream) {
  SocketState& s = StateOf(stream);
  // What is left is a goodbye (libgit2 ends a git:// session with a flush packet): one try,
  // no wait, since a close may come outside any operation's deadline.
  if (s.fd >= 0 && !s.pending.empty()) {
    [[maybe_unused]] const ssize_t sent =
        send(s.fd, s.pending.data(), s.pending.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  s.pending.clear();
  if (s.fd >= 0) close(s.fd);
  s.fd = -1;
  return 0;
}

void StreamFree(git_stream* stream) {
  auto* socket = reinterpret_cast<DeadlineSocket*>(stream);
  StreamClose(stream);
  delete socket->state;
  delete socket;
}

int StreamNew(git_stream** out, const char* host, const char* port) {
  auto* socket = new DeadlineSocket{};
  socket->state = new SocketState{host, port, -1, {}};
  socket->parent.version = GIT_STREAM_VERSION;
  socket->parent.encrypted = 0;
  socket->parent.proxy_support = 0;
  socket->parent.connect = StreamConnect;
  socket->parent.read = StreamRead;
  socket->parent.write = StreamWrite;
  socket->parent.close = StreamClose;
  socket->parent.free = StreamFree;
  *out = &socket->parent;
  return 0;
}

}  // namespace

void RegisterDeadlineSocketStream() {
  static git_stream_registration registration = {GIT_STREAM_VERSION, StreamNew, nullptr};
  git_stream_register(GIT_STREAM_STANDARD, &registration);
}

}  // namespace tr::gitsource
