#include "tests/support/e2e/waiter.h"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "base/env.h"

namespace tr::e2e {
namespace fs = std::filesystem;

namespace {
constexpr uint32_t kEvents = IN_CREATE | IN_MODIFY | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE;
}  // namespace

ChangeWatcher::ChangeWatcher() : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {}

ChangeWatcher::~ChangeWatcher() {
  if (fd_ >= 0) close(fd_);
}

void ChangeWatcher::Watch(const fs::path& dir) { AddTree(dir); }

void ChangeWatcher::AddTree(const fs::path& dir) {
  if (fd_ < 0) return;
  const int wd = inotify_add_watch(fd_, dir.c_str(), kEvents | IN_ONLYDIR);
  if (wd < 0) return;
  if (dirs_.contains(wd)) return;
  dirs_[wd] = dir;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec) && !entry.is_symlink(ec)) AddTree(entry.path());
  }
}

void ChangeWatcher::WaitForChange(std::chrono::milliseconds cap) {
  if (fd_ < 0) {
    poll(nullptr, 0, static_cast<int>(cap.count()));
    return;
  }
  pollfd pfd = {fd_, POLLIN, 0};
  if (poll(&pfd, 1, static_cast<int>(cap.count())) <= 0) return;
  alignas(inotify_event) char buffer[8192];
  std::vector<fs::path> created;
  ssize_t got;
  while ((got = read(fd_, buffer, sizeof buffer)) > 0) {
    for (ssize_t at = 0; at < got;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      if ((event->mask & IN_CREATE) && (event->mask & IN_ISDIR) && event->len > 0) {
        auto dir = dirs_.find(event->wd);
        if (dir != dirs_.end()) created.push_back(dir->second / event->name);
      }
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
  for (const auto& dir : created) AddTree(dir);
}

bool WaitUntil(ChangeWatcher& watcher, std::chrono::milliseconds timeout,
               const std::function<bool()>& condition) {
  const auto deadline = Env::Default().Now() + timeout;
  while (!condition()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Env::Default().Now());
    if (left.count() <= 0) return condition();
    watcher.WaitForChange(std::min(left, std::chrono::milliseconds(50)));
  }
  return true;
}

}  // namespace tr::e2e
