#include "reconciler/logging.h"

#include <mutex>

#include "spdlog/sinks/stdout_sinks.h"

namespace tr::reconciler {

void ConfigureLogging(const std::string& level) {
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %n %v", spdlog::pattern_time_type::utc);
  spdlog::flush_on(spdlog::level::trace);
}

std::shared_ptr<spdlog::logger> ModuleLogger(const std::string& module) {
  static std::mutex mu;
  std::lock_guard lock(mu);
  if (auto logger = spdlog::get(module)) return logger;
  auto logger = spdlog::stderr_logger_mt(module);
  logger->set_level(spdlog::get_level());
  return logger;
}

}  // namespace tr::reconciler
