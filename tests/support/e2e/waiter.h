// Waiting for a condition with a deadline, without sleeping. Between two checks of the
// condition the waiter blocks in poll(2) on an inotify descriptor that watches the directories
// where the processes under test leave their traces (the simulator's journal, the Git server's
// refs, the daemon's log), so a check follows a change within milliseconds; each wait is capped
// (50 ms) so that a change nobody watches is still seen.
//
// Thread-compatible: one thread owns a ChangeWatcher.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

namespace tr::e2e {

class ChangeWatcher {
 public:
  ChangeWatcher();
  ~ChangeWatcher();
  ChangeWatcher(const ChangeWatcher&) = delete;
  ChangeWatcher& operator=(const ChangeWatcher&) = delete;

  // Watches `dir` and, as they appear, its subdirectories (files created, written, renamed
  // into it). A directory that does not exist yet is ignored; watch its parent instead.
  void Watch(const std::filesystem::path& dir);
  // Blocks until something changed in a watched directory or `cap` passed.
  void WaitForChange(std::chrono::milliseconds cap = std::chrono::milliseconds(50));

 private:
  void AddTree(const std::filesystem::path& dir);

  int fd_ = -1;
  std::map<int, std::filesystem::path> dirs_;  // watch descriptor -> directory
};

// Checks `condition` until it holds or `timeout` passes, waiting on `watcher` in between.
// Returns whether it held (the last check is made after the deadline).
bool WaitUntil(ChangeWatcher& watcher, std::chrono::milliseconds timeout,
               const std::function<bool()>& condition);

}  // namespace tr::e2e
