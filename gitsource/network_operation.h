// One bounded network operation (list refs, fetch, push): its deadline, its cancellation,
// and what went wrong, shared between our code and the places libgit2 calls back into us
// (the socket stream, the ssh subtransport, progress callbacks).
//
// libgit2 1.5 has no timeouts of its own, so every byte it moves goes through code of ours
// that waits with `WaitReady`, which honours the deadline and wakes at once on cancellation.
// An operation installs itself as the current one of its thread for its lifetime; libgit2
// runs a network operation on the calling thread, so its callbacks find it there.
//
// Thread-safety: `Cancel`/stop requests may come from any thread; everything else is used by
// the thread that runs the operation.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/env.h"

namespace tr::gitsource {

// Why an operation failed, when we know better than libgit2's message.
enum class NetworkFailure {
  kNone,
  kDeadlineExceeded,
  kCancelled,
  kFetchTooLarge,    // the fetched-bytes cap was hit
  kHostKeyRejected,  // unknown or mismatched ssh host key
  kAuthenticationFailed,
};

class NetworkOperation {
 public:
  // `env` sets and checks the deadline (the real one: the IO is real).
  NetworkOperation(std::chrono::milliseconds timeout, std::stop_token stop, Env& env);
  ~NetworkOperation();
  NetworkOperation(const NetworkOperation&) = delete;
  NetworkOperation& operator=(const NetworkOperation&) = delete;

  // The operation running on this thread, or null.
  static NetworkOperation* Current();

  // Waits until `fd` is ready for `events` (poll(2) flags). Returns true when ready; false
  // once the deadline passed or the operation was cancelled (the failure is recorded).
  bool WaitReady(int fd, short events);
  // Like WaitReady, but also drains `side_fd` (e.g. a child's stderr) into `side_output`,
  // keeping at most `side_limit` bytes. `side_fd` is set to -1 once it reaches end of file.
  bool WaitReadyDraining(int fd, short events, int& side_fd, std::string& side_output,
                         std::size_t side_limit);
  // Records the failure if the deadline passed or a stop was requested; true while alive.
  bool CheckAlive();
  // Milliseconds left, at least 0.
  std::chrono::milliseconds Remaining() const;

  void RecordFailure(NetworkFailure failure, std::string detail = {});
  NetworkFailure failure() const { return failure_; }
  const std::string& failure_detail() const { return failure_detail_; }

  // Secrets used by this operation; `Redact` replaces each with "[redacted]".
  void AddSecret(std::string secret);
  std::string Redact(std::string text) const;

 private:
  bool Wait(int fd, short events, int* side_fd, std::string* side_output, std::size_t side_limit);

  Env& env_;
  Env::Instant deadline_;
  std::stop_token stop_;
  int cancel_fd_ = -1;  // eventfd, readable once a stop was requested
  std::optional<std::stop_callback<std::function<void()>>> on_stop_;
  NetworkOperation* previous_ = nullptr;
  NetworkFailure failure_ = NetworkFailure::kNone;
  std::string failure_detail_;
  std::vector<std::string> secrets_;
};

// Replaces every occurrence of each non-empty secret in `text` with "[redacted]".
std::string RedactSecrets(std::string text, const std::vector<std::string>& secrets);

// Sets libgit2's error for a transport call made outside any NetworkOperation and returns -1.
int OutsideAnOperation();

// Runs `body` with the thread's operation. Every network call of gitsource runs inside one
// (RemoteClient's Sync and Push), which holds its deadline, stop and env; a transport call
// outside any fails as a network error (-1) instead of running unbounded.
template <typename Body>
auto WithOperation(Body body) -> decltype(body(std::declval<NetworkOperation&>())) {
  if (NetworkOperation* op = NetworkOperation::Current()) return body(*op);
  return OutsideAnOperation();
}

}  // namespace tr::gitsource
