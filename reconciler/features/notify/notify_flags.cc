#include "reconciler/features/notify/notify_flags.h"

#include "reconciler/features/notify/notify_target.h"
#include "reconciler/runtime/flags.h"

namespace tr::reconciler::notify {

void NotifyFlags::AddFlags(CLI::App& cmd) {
  // The formats are named from their table, so a new one shows up here by itself.
  flags::Flag(cmd, "notify", entries,
              "Notification receiver: url=URL|url-file=FILE,format=FORMAT[,secret-file=FILE] "
              "(repeatable); "
              "FORMAT: " + MessageFormatNames() +
                  "; slack-bot takes token-file=FILE,channel=ID[,threads=nodes]; any receiver "
                  "takes the filters event=NAME, cluster=PATTERN, label=KEY=VALUE, "
                  "min-severity=info|warning|error");
}

absl::Status NotifyFlags::Finish() const {
  for (const std::string& entry : entries) {
    if (auto target = ParseNotifyTarget(entry); !target.ok()) return target.status();
  }
  return absl::OkStatus();
}

}  // namespace tr::reconciler::notify
