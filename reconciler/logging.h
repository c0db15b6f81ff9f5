// Structured logs: one spdlog logger per module, lines of key=value fields. Secrets are never
// passed to a logger.
#pragma once

#include <memory>
#include <string>

#include "spdlog/spdlog.h"

namespace tr::reconciler {

// Sets the level of every logger ("trace" ... "error") and the line format:
// `2026-11-22T03:00:00.123Z level module message`, to stderr.
void ConfigureLogging(const std::string& level);

// The logger of `module` ("controller", "rollout", "git", "http"), made on first use.
std::shared_ptr<spdlog::logger> ModuleLogger(const std::string& module);

}  // namespace tr::reconciler
