// A small blocking queue that carries results from the simulator's scheduler thread to a gRPC
// handler thread, so handlers never hold the cluster lock while they write to a stream.
//
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace tr::sim {

template <typename T>
class Mailbox {
 public:
  // Adds an item; ignored after Close().
  void Push(T item) {
    std::lock_guard lock(mu_);
    if (closed_) return;
    items_.push_back(std::move(item));
    cv_.notify_all();
  }
  // No more items will come; Pop drains what is queued, then reports closed.
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  // The next item, waiting up to `wait`; nullopt on timeout or when closed and drained.
  std::optional<T> Pop(std::chrono::milliseconds wait) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, wait, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    return item;
  }
  // True when closed and drained.
  bool Done() const {
    std::lock_guard lock(mu_);
    return closed_ && items_.empty();
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace tr::sim
