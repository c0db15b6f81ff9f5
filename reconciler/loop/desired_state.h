// The desired state the controller works from: the profiles decoded at the commit the last
// poll saw. The poll loop publishes a new snapshot; reconciles read the current one.
//
// Thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "base/mutex.h"
#include "core/profile_set.h"

namespace tr::reconciler {

struct DesiredSnapshot {
  std::string commit;  // the desired branch's commit the profiles were read at
  core::ProfileSet profiles;
};

class DesiredState {
 public:
  void Publish(std::shared_ptr<const DesiredSnapshot> snapshot) {
    MutexLock lock(mu_);
    current_ = std::move(snapshot);
  }
  // The latest published snapshot; null before the first.
  std::shared_ptr<const DesiredSnapshot> Current() const {
    MutexLock lock(mu_);
    return current_;
  }

 private:
  mutable Mutex mu_;
  std::shared_ptr<const DesiredSnapshot> current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler
