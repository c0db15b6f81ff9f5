// A mutex the compiler can reason about: std::mutex with clang's thread-safety annotations, so
// members marked ABSL_GUARDED_BY(mu_) are checked by -Wthread-safety (scripts/test builds the
// libraries with it). Unlike absl::Mutex it is a BasicLockable, and so is its scoped lock, so
// std::condition_variable_any can wait on them with a std::stop_token.
//
// Use: `Mutex mu_; int n_ ABSL_GUARDED_BY(mu_);` and `MutexLock lock(mu_);` in a scope.
// A predicate passed to a wait reads guarded members: mark it ABSL_EXCLUSIVE_LOCKS_REQUIRED.
//
// Thread-safe, as std::mutex.
#pragma once

#include <mutex>

#include "absl/base/thread_annotations.h"

namespace tr {

class ABSL_LOCKABLE Mutex {
 public:
  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

// Holds `mu` for its scope; unlock() and lock() let a wait or a slow call release it meanwhile.
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() {
    if (held_) mu_.unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    mu_.lock();
    held_ = true;
  }
  void unlock() ABSL_UNLOCK_FUNCTION() {
    held_ = false;
    mu_.unlock();
  }
  // The mutex it holds (a simulated Env takes it to wake a waiter without a lost wake-up).
  Mutex& mutex() const ABSL_LOCK_RETURNED(mu_) { return mu_; }

 private:
  Mutex& mu_;
  bool held_ = true;
};

}  // namespace tr
