#include "reconciler/clients/kube/idle_closer.h"

#include <malloc.h>

#include <algorithm>

#include "base/thread_name.h"

namespace tr::reconciler::kube {

std::shared_ptr<IdleCloser> IdleCloser::Shared(Env& env) {
  static Mutex mu;
  static std::weak_ptr<IdleCloser> shared;
  MutexLock lock(mu);
  std::shared_ptr<IdleCloser> closer = shared.lock();
  if (!closer) {
    closer = std::make_shared<IdleCloser>(env);
    shared = closer;
  }
  return closer;
}

void IdleCloser::DefaultGiveBackMemory() { malloc_trim(0); }

IdleCloser::IdleCloser(Env& env, std::function<void()> give_back_memory)
    : env_(env),
      give_back_memory_(std::move(give_back_memory)),
      thread_([this](std::stop_token stop) {
        NameThisThread("kube-idle");
        Run(std::move(stop));
      }) {}

// The clients hold the closer, never the other way round: it is never destroyed on its thread.
IdleCloser::~IdleCloser() {
  thread_.request_stop();
  thread_.join();
}

int IdleCloser::Add(std::chrono::milliseconds idle_timeout, CloseIfIdle close_if_idle) {
  MutexLock lock(mu_);
  const int id = next_id_++;
  clients_[id] = Client{idle_timeout, std::move(close_if_idle)};
  if (idle_timeout / 2 < period_) {
    shortened_ = true;
    wake_.notify_all();
  }
  return id;
}

void IdleCloser::Remove(int id) {
  MutexLock lock(mu_);
  clients_.erase(id);
}

std::chrono::milliseconds IdleCloser::ShortestTimeout() const {
  std::chrono::milliseconds shortest{std::chrono::hours(2)};
  for (const auto& [id, client] : clients_) shortest = std::min(shortest, client.idle_timeout);
  return shortest;
}

std::chrono::milliseconds IdleCloser::Period() const {
  return std::max(ShortestTimeout() / 2, std::chrono::milliseconds(1));
}

bool IdleCloser::Sweep(Env::TimePoint now) {
  bool busy = false;
  for (const auto& [id, client] : clients_) {
    const Idle idle = client.close_if_idle(now);
    if (idle == Idle::kClosed) last_closed_ = now;
    busy = busy || idle == Idle::kBusy;
  }
  return !busy && last_closed_ && now - *last_closed_ <= 2 * ShortestTimeout();
}

void IdleCloser::Run(std::stop_token stop) {
  MutexLock lock(mu_);
  while (!stop.stop_requested()) {
    if (Sweep(env_.Now())) {
      lock.unlock();  // it walks the whole heap: Add and Remove need not wait for it
      give_back_memory_();
      lock.lock();
    }
    period_ = Period();
    shortened_ = false;
    env_.WaitFor(wake_, lock, stop, period_,
                 [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return shortened_; });
  }
}

}  // namespace tr::reconciler::kube
