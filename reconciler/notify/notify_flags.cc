#include "reconciler/notify/notify_flags.h"

#include "reconciler/flags.h"
#include "reconciler/notify/notify_target.h"

namespace tr::reconciler::notify {

void NotifyFlags::AddFlags(CLI::App& cmd) {
  flags::Flag(cmd, "notify", entries,
              "Notification receiver: url=URL,format=json|slack[,secret-file=FILE] (repeatable)");
}

absl::Status NotifyFlags::Finish() const {
  for (const std::string& entry : entries) {
    if (auto target = ParseNotifyTarget(entry); !target.ok()) return target.status();
  }
  return absl::OkStatus();
}

}  // namespace tr::reconciler::notify
