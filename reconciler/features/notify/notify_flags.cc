#include "reconciler/features/notify/notify_flags.h"

#include "reconciler/features/notify/notify_target.h"
#include "reconciler/runtime/flags.h"

namespace tr::reconciler::notify {
namespace {

// "; slack-bot takes token-file=FILE,...": what each format with keys of its own takes.
std::string FormatKeysUsage() {
  std::string usage;
  for (const auto& format : MessageFormats()) {
    const std::string keys = format->KeysUsage();
    if (!keys.empty()) usage += "; " + std::string(format->Name()) + " takes " + keys;
  }
  return usage;
}

}  // namespace

void NotifyFlags::AddFlags(CLI::App& cmd) {
  // The formats and their keys are named from their registry, so a new one shows up here by
  // itself.
  flags::Flag(cmd, "notify", entries,
              "Notification receiver: url=URL|url-file=FILE,format=FORMAT[,secret-file=FILE] "
              "(repeatable); "
              "FORMAT: " + MessageFormatNames() + FormatKeysUsage() +
                  "; any receiver takes the filters event=NAME, cluster=PATTERN, "
                  "label=KEY=VALUE, min-severity=info|warning|error");
}

absl::Status NotifyFlags::Finish() const {
  for (const std::string& entry : entries) {
    if (auto target = ParseNotifyTarget(entry); !target.ok()) return target.status();
  }
  return absl::OkStatus();
}

}  // namespace tr::reconciler::notify
