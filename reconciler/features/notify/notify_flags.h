// The setting of the notification receivers (`--notify`, repeatable): registered and checked
// here, used by the daemon's wiring to start a sender per entry.
//
// Values only; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"

namespace tr::reconciler::notify {

struct NotifyFlags {
  std::vector<std::string> entries;  // `url=...,format=NAME,secret-file=...`

  void AddFlags(CLI::App& cmd);
  // Every entry parses (ParseNotifyTarget, which reads its secret file); its error otherwise.
  absl::Status Finish() const;
};

}  // namespace tr::reconciler::notify
