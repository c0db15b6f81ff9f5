#include "gitsource/network_operation.h"

#include <git2.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <functional>

namespace tr::gitsource {
namespace {

thread_local NetworkOperation* current_operation = nullptr;

constexpr std::string_view kRedacted = "[redacted]";

}  // namespace

std::string RedactSecrets(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + kRedacted.size())) {
      text.replace(at, secret.size(), kRedacted);
    }
  }
  return text;
}

NetworkOperation::NetworkOperation(std::chrono::milliseconds timeout, std::stop_token stop,
                                   Env& env)
    : env_(env), deadline_(env.Monotonic() + timeout), stop_(std::move(stop)) {
  cancel_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (cancel_fd_ >= 0 && stop_.stop_possible()) {
    const int fd = cancel_fd_;
    on_stop_.emplace(stop_, std::function<void()>([fd] {
                       const std::uint64_t one = 1;
                       [[maybe_unused]] const ssize_t n = write(fd, &one, sizeof one);
                     }));
  }
  previous_ = current_operation;
  current_operation = this;
}

NetworkOperation::~NetworkOperation() {
  current_operation = previous_;
  on_stop_.reset();
  if (cancel_fd_ >= 0) close(cancel_fd_);
}

NetworkOperation* NetworkOperation::Current() { return current_operation; }

int OutsideAnOperation() {
  git_error_set_str(GIT_ERROR_NET, "a network call outside a network operation");
  return -1;
}

std::chrono::milliseconds NetworkOperation::Remaining() const {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - env_.Monotonic());
  return std::max(left, std::chrono::milliseconds(0));
}

bool NetworkOperation::CheckAlive() {
  if (failure_ == NetworkFailure::kCancelled || failure_ == NetworkFailure::kDeadlineExceeded) {
    return false;
  }
  if (stop_.stop_requested()) {
    RecordFailure(NetworkFailure::kCancelled, "the operation was cancelled");
    return false;
  }
  if (env_.Monotonic() >= deadline_) {
    RecordFailure(NetworkFailure::kDeadlineExceeded, "the operation's deadline passed");
    return false;
  }
  return true;
}

bool NetworkOperation::WaitReady(int fd, short events) {
  return Wait(fd, events, nullptr, nullptr, 0);
}

bool NetworkOperation::WaitReadyDraining(int fd, short events, int& side_fd,
                                         std::string& side_output, std::size_t side_limit) {
  return Wait(fd, events, &side_fd, &side_output, side_limit);
}

bool NetworkOperation::Wait(int fd, short events, int* side_fd, std::string* side_output,
                            std::size_t side_limit) {
  while (CheckAlive()) {
    pollfd fds[3] = {{fd, events, 0}, {cancel_fd_, POLLIN, 0}, {-1, POLLIN, 0}};
    if (side_fd != nullptr) fds[2].fd = *side_fd;
    const auto timeout = std::min<std::chrono::milliseconds::rep>(Remaining().count(), 1 << 30);
    const int n = poll(fds, 3, static_cast<int>(timeout));
    if (n < 0 && errno != EINTR) return false;
    if (n <= 0) continue;  // timed out or interrupted: CheckAlive decides
    if (fds[2].revents != 0) {
      char buffer[1024];
      const ssize_t got = read(fds[2].fd, buffer, sizeof buffer);
      if (got > 0) {
        const std::size_t room = side_limit - std::min(side_limit, side_output->size());
        side_output->append(buffer, std::min(room, static_cast<std::size_t>(got)));
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        *side_fd = -1;
      }
    }
    if (fds[0].revents != 0) return true;
  }
  return false;
}

void NetworkOperation::RecordFailure(NetworkFailure failure, std::string detail) {
  if (failure_ != NetworkFailure::kNone) return;  // the first cause wins
  failure_ = failure;
  failure_detail_ = std::move(detail);
}

void NetworkOperation::AddSecret(std::string secret) {
  if (!secret.empty()) secrets_.push_back(std::move(secret));
}

std::string NetworkOperation::Redact(std::string text) const {
  return RedactSecrets(std::move(text), secrets_);
}

}  // namespace tr::gitsource
