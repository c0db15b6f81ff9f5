#include "reconciler/features/notify/notifier_factory.h"

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "reconciler/features/notify/fan_out_notifier.h"
#include "reconciler/runtime/logging.h"
#include "reconciler/runtime/private_files.h"

namespace tr::reconciler::notify {
namespace {

namespace fs = std::filesystem;

// Spooled deliveries of a receiver no longer configured would never be sent: delete them.
void RemoveStaleSpools(const fs::path& spool_dir, const std::set<std::string>& keys) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(spool_dir, ec)) {
    if (entry.is_directory() && !keys.contains(entry.path().filename().string())) {
      ModuleLogger("notify")->warn(
          "step=spool-load dir={} outcome=removed reason=\"receiver no longer configured\"",
          entry.path().filename().string());
      fs::remove_all(entry.path(), ec);
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Notifier>> StartNotifier(const NotifyFlags& flags,
                                                        const WebhookNotifierOptions& options,
                                                        Metrics& metrics, Env& env) {
  if (absl::Status s = MakePrivateDirectory(options.spool_dir); !s.ok()) return s;
  std::set<std::string> keys;
  std::vector<std::unique_ptr<Notifier>> sinks;
  for (const std::string& entry : flags.entries) {
    absl::StatusOr<NotifyTarget> target = ParseNotifyTarget(entry);
    if (!target.ok()) return target.status();
    keys.insert(target->key);
    auto sink = WebhookNotifier::Start(*std::move(target), options, metrics, env);
    if (!sink.ok()) return sink.status();
    sinks.push_back(*std::move(sink));
  }
  RemoveStaleSpools(options.spool_dir, keys);
  return std::make_unique<FanOutNotifier>(std::move(sinks));
}

}  // namespace tr::reconciler::notify
