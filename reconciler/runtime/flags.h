// How a setting of `run` becomes a flag: each subsystem registers its own (its `AddFlags`) with
// these helpers, so that every flag also reads its environment variable
// (TALOS_RECONCILER_<FLAG>, e.g. TALOS_RECONCILER_REPO) and durations are written one way.
// A subsystem's `Finish` checks its settings with `Invalid`, which names the flag.
//
// Thread-compatible.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tr::reconciler::flags {

// "TALOS_RECONCILER_POLL_INTERVAL" for "poll-interval".
std::string EnvName(std::string_view flag);

// `--name` with its environment variable, the default shown in --help.
template <typename T>
CLI::Option* Flag(CLI::App& cmd, const std::string& name, T& value, const std::string& help) {
  return cmd.add_option("--" + name, value, help)->envname(EnvName(name))->capture_default_str();
}

// A flag without a value (`--dry-run`), with its environment variable.
CLI::Option* Switch(CLI::App& cmd, const std::string& name, bool& value, const std::string& help);

// A duration flag ("30s", "5m") parsed with the profile syntax; its default in the help.
CLI::Option* DurationFlag(CLI::App& cmd, const std::string& name, std::chrono::seconds& value,
                          const std::string& help);

// A duration flag that also takes milliseconds ("200ms"); `help` states the default.
CLI::Option* MillisFlag(CLI::App& cmd, const std::string& name, std::chrono::milliseconds& value,
                        const std::string& help);

// "200ms", or any duration the profile syntax reads ("5s", "1m").
absl::StatusOr<std::chrono::milliseconds> ParseMillis(const std::string& text);

// InvalidArgument "--<setting>: <why>".
absl::Status Invalid(std::string_view setting, std::string_view why);

}  // namespace tr::reconciler::flags
