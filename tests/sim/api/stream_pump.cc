#include "tests/sim/api/stream_pump.h"

#include <pthread.h>

namespace tr::sim {

StreamPump::~StreamPump() {
  {
    std::lock_guard lock(cluster_.mu());
    stop_ = true;
  }
  cluster_.cv().notify_all();
  std::thread thread;
  {
    absl::MutexLock lock(&mu_);
    thread = std::move(thread_);
  }
  if (thread.joinable()) thread.join();
}

void StreamPump::AddLocked(std::shared_ptr<PumpedFeed> feed) {
  absl::MutexLock lock(&mu_);
  feeds_.push_back(std::move(feed));
  if (!thread_.joinable()) {
    thread_ = std::thread([this] {
      // Started from gRPC's callback thread, whose name (nexting_thread) it would otherwise
      // keep: a profile then counts a pump of each cluster as gRPC's.
      pthread_setname_np(pthread_self(), "stream-pump");
      Run();
    });
  }
}

void StreamPump::Remove(const PumpedFeed* feed) {
  absl::MutexLock lock(&mu_);
  std::erase_if(feeds_, [feed](const auto& f) { return f.get() == feed; });
}

// At each notification of the cluster: every feed's news collected under the cluster lock, then
// handed on without it.
void StreamPump::Run() {
  std::unique_lock lock(cluster_.mu());
  while (!stop_) {
    std::vector<std::shared_ptr<PumpedFeed>> news;
    {
      absl::MutexLock feeds(&mu_);
      for (const auto& feed : feeds_) {
        if (feed->CollectLocked(cluster_)) news.push_back(feed);
      }
    }
    if (news.empty()) {
      cluster_.cv().wait(lock);
      continue;
    }
    lock.unlock();
    for (const auto& feed : news) feed->Deliver();
    news.clear();
    lock.lock();
  }
}

}  // namespace tr::sim
