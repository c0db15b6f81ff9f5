#include "gitsource/ssh_transport.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "fmt/format.h"
#include "gitsource/network_operation.h"
#include "gitsource/remote_url.h"
#include "gitsource/subprocess.h"

namespace tr::gitsource {
namespace {

constexpr std::size_t kStderrLimit = 4096;
constexpr std::chrono::milliseconds kExitGrace{1000};

struct SshSubtransport;

struct SshStreamState {
  SshSubtransport* owner = nullptr;
  std::optional<Subprocess> ssh;
  int socket = -1;     // our end of the child's stdin/stdout
  int stderr_fd = -1;  // read end of the child's stderr
  std::string stderr_text;
  std::string host;
  bool failed = false;
};

struct SshStream {
  git_smart_subtransport_stream parent;
  SshStreamState* state;
};

struct SshSubtransport {
  git_smart_subtransport parent;
  git_transport* owner;
  const SshSettings* settings;
  SshStream* current;
};

static_assert(std::is_standard_layout_v<SshStream>);
static_assert(std::is_standard_layout_v<SshSubtransport>);

SshStreamState& StateOf(git_smart_subtransport_stream* stream) {
  return *reinterpret_cast<SshStream*>(stream)->state;
}

// The first line of ssh's complaint, trimmed, for messages.
std::string FirstLines(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\r') continue;
    out.push_back(c == '\n' ? ' ' : c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? "no message" : out;
}

NetworkFailure Classify(const std::string& text) {
  for (const char* marker :
       {"Host key verification failed", "host key is known",
        "REMOTE HOST IDENTIFICATION HAS CHANGED", "No matching host key", "host key for"}) {
    if (text.find(marker) != std::string::npos) return NetworkFailure::kHostKeyRejected;
  }
  if (text.find("Permission denied (") != std::string::npos) {
    return NetworkFailure::kAuthenticationFailed;
  }
  return NetworkFailure::kNone;
}

// The connection ended (or must end): collect ssh's verdict and turn it into an error.
int Fail(SshStreamState& s, NetworkOperation& op, std::string_view what) {
  s.failed = true;
  if (op.failure() == NetworkFailure::kDeadlineExceeded ||
      op.failure() == NetworkFailure::kCancelled) {
    s.ssh->Signal(SIGKILL);
    git_error_set_str(GIT_ERROR_SSH,
                      fmt::format("ssh to {}: {}", s.host, op.failure_detail()).c_str());
    return -1;
  }
  std::optional<int> status = s.ssh->WaitFor(std::min(op.Remaining(), kExitGrace));
  while (s.stderr_fd >= 0) {  // the child is gone or going: take what it said
    char buffer[1024];
    const ssize_t got = read(s.stderr_fd, buffer, sizeof buffer);
    if (got <= 0) break;
    s.stderr_text.append(
        buffer, std::min<std::size_t>(static_cast<std::size_t>(got),
                                      kStderrLimit - std::min(kStderrLimit, s.stderr_text.size())));
  }
  const std::string said = FirstLines(s.stderr_text);
  const std::string message =
      fmt::format("ssh to {} {} ({}): {}", s.host, what,
                  status.has_value() ? DescribeWaitStatus(*status) : "still running", said);
  if (const NetworkFailure failure = Classify(s.stderr_text); failure != NetworkFailure::kNone) {
    op.RecordFailure(failure, message);
  }
  git_error_set_str(GIT_ERROR_SSH, op.Redact(message).c_str());
  return -1;
}

int StreamRead(git_smart_subtransport_stream* stream, char* buffer, size_t size,
               size_t* bytes_read) {
  SshStreamState& s = StateOf(stream);
  *bytes_read = 0;
  return WithOperation([&](NetworkOperation& op) {
    while (!s.failed) {
      const ssize_t got = recv(s.socket, buffer, size, 0);
      if (got > 0) {
        *bytes_read = static_cast<size_t>(got);
        return 0;
      }
      if (got == 0) return Fail(s, op, "ended the connection");
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return Fail(s, op, "failed");
      if (!op.WaitReadyDraining(s.socket, POLLIN, s.stderr_fd, s.stderr_text, kStderrLimit)) {
        return Fail(s, op, "timed out");
      }
    }
    git_error_set_str(GIT_ERROR_SSH, "the ssh connection already failed");
    return -1;
  });
}

int StreamWrite(git_smart_subtransport_stream* stream, const char* buffer, size_t length) {
  SshStreamState& s = StateOf(stream);
  return WithOperation([&](NetworkOperation& op) {
    size_t done = 0;
    while (done < length && !s.failed) {
      const ssize_t sent = send(s.socket, buffer + done, length - done, MSG_NOSIGNAL);
      if (sent > 0) {
        done += static_cast<size_t>(sent);
        continue;
      }
      if (sent < 0 && errno == EINTR) continue;
      if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        return Fail(s, op, "ended the connection");
      }
      if (!op.WaitReadyDraining(s.socket, POLLOUT, s.stderr_fd, s.stderr_text, kStderrLimit)) {
        return Fail(s, op, "timed out");
      }
    }
    if (done < length) {
      git_error_set_str(GIT_ERROR_SSH, "the ssh connection already failed");
      return -1;
    }
    return 0;
  });
}

void StreamFree(git_smart_subtransport_stream* stream) {
  auto* ssh_stream = reinterpret_cast<SshStream*>(stream);
  SshStreamState* s = ssh_stream->state;
  if (s->owner != nullptr && s->owner->current == ssh_stream) s->owner->current = nullptr;
  if (s->socket >= 0) close(s->socket);  // ssh sees end of input and exits
  if (s->ssh.has_value()) {
    const NetworkOperation* op = NetworkOperation::Current();
    const auto grace = op != nullptr ? std::min(op->Remaining(), kExitGrace) : kExitGrace;
    if (!s->ssh->WaitFor(grace).has_value()) s->ssh->Signal(SIGKILL);
  }
  if (s->stderr_fd >= 0) close(s->stderr_fd);
  delete s;  // the Subprocess reaps the child
  delete ssh_stream;
}

std::vector<std::string> SshArguments(const SshSettings& settings, const RemoteUrl& url,
                                      const std::string& command, NetworkOperation& op) {
  const auto seconds =
      std::max<long long>(1, std::chrono::ceil<std::chrono::seconds>(op.Remaining()).count());
  const std::vector<std::string> options = {
      "BatchMode=yes",
      "StrictHostKeyChecking=yes",
      fmt::format("UserKnownHostsFile=\"{}\"", settings.known_hosts_file.string()),
      "GlobalKnownHostsFile=/dev/null",
      "UpdateHostKeys=no",
      "CheckHostIP=no",
      "IdentitiesOnly=yes",
      "IdentityAgent=none",
      settings.key_file.empty() ? std::string("IdentityFile=none")
                                : fmt::format("IdentityFile=\"{}\"", settings.key_file.string()),
      "PasswordAuthentication=no",
      "KbdInteractiveAuthentication=no",
      "LogLevel=ERROR",
      fmt::format("ConnectTimeout={}", seconds),
  };
  std::vector<std::string> argv = {settings.ssh_command, "-F", "/dev/null", "-T", "-x", "-a"};
  for (const std::string& option : options) argv.insert(argv.end(), {"-o", option});
  if (!url.port.empty()) argv.insert(argv.end(), {"-p", url.port});
  argv.insert(argv.end(), {"-l", url.user.empty() ? settings.default_user : url.user, "--",
                           url.host, fmt::format("{} {}", command, ShellQuote(url.path))});
  return argv;
}

std::vector<std::string> SshEnvironment() {
  std::vector<std::string> env;
  for (const char* name : {"PATH", "HOME"}) {
    if (const char* value = std::getenv(name)) env.push_back(fmt::format("{}={}", name, value));
  }
  return env;
}

int StartStream(SshSubtransport& t, const char* url_text, const std::string& command,
                git_smart_subtransport_stream** out) {
  return WithOperation([&](NetworkOperation& op) {
    absl::StatusOr<RemoteUrl> url = ParseRemoteUrl(url_text);
    if (!url.ok() || url->transport != Transport::kSsh) {
      git_error_set_str(GIT_ERROR_SSH, "not an ssh URL");
      return -1;
    }
    if (t.settings->known_hosts_file.empty()) {
      op.RecordFailure(NetworkFailure::kHostKeyRejected, "no known_hosts file is configured");
      git_error_set_str(GIT_ERROR_SSH, "no known_hosts file is configured");
      return -1;
    }
    int pair[2];
    int err[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return -1;
    if (pipe2(err, O_CLOEXEC) != 0) {
      close(pair[0]);
      close(pair[1]);
      return -1;
    }
    SpawnOptions spawn{SshArguments(*t.settings, *url, command, op),
                       SshEnvironment(),
                       pair[1],
                       pair[1],
                       err[1],
                       {}};
    absl::StatusOr<Subprocess> child = Subprocess::Spawn(spawn);
    close(pair[1]);
    close(err[1]);
    if (!child.ok()) {
      close(pair[0]);
      close(err[0]);
      git_error_set_str(GIT_ERROR_SSH, std::string(child.status().message()).c_str());
      return -1;
    }
    fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK);
    fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
    auto* state = new SshStreamState{&t, *std::move(child), pair[0], err[0], {}, url->host, false};
    auto* stream = new SshStream{{&t.parent, StreamRead, StreamWrite, StreamFree}, state};
    t.current = stream;
    *out = &stream->parent;
    return 0;
  });
}

int Action(git_smart_subtransport_stream** out, git_smart_subtransport* subtransport,
           const char* url, git_smart_service_t action) {
  auto& t = *reinterpret_cast<SshSubtransport*>(subtransport);
  switch (action) {
    case GIT_SERVICE_UPLOADPACK_LS:
      return StartStream(t, url, "git-upload-pack", out);
    case GIT_SERVICE_RECEIVEPACK_LS:
      return StartStream(t, url, "git-receive-pack", out);
    case GIT_SERVICE_UPLOADPACK:
    case GIT_SERVICE_RECEIVEPACK:
      if (t.current == nullptr) {
        git_error_set_str(GIT_ERROR_SSH, "the ssh transport has no open connection");
        return -1;
      }
      *out = &t.current->parent;
      return 0;
  }
  git_error_set_str(GIT_ERROR_SSH, "unknown ssh action");
  return -1;
}

int Close(git_smart_subtransport* /*subtransport*/) { return 0; }

void Free(git_smart_subtransport* subtransport) {
  auto* t = reinterpret_cast<SshSubtransport*>(subtransport);
  if (t->current != nullptr) StreamFree(&t->current->parent);
  delete t;
}

}  // namespace

std::string ShellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '!') {
      out += "'\\";
      out += c;
      out += '\'';
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

int NewSshSubtransport(git_smart_subtransport** out, git_transport* owner, void* param) {
  auto* t = new SshSubtransport{
      {Action, Close, Free}, owner, static_cast<const SshSettings*>(param), nullptr};
  *out = &t->parent;
  return 0;
}

}  // namespace tr::gitsource
