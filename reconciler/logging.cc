#include "reconciler/logging.h"

#include <mutex>

#include "fmt/format.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"

namespace tr::reconciler {
namespace {

// "cluster=<name> reconcile=<id> " while a ReconcileLogScope lives on this thread, else empty.
thread_local std::string reconcile_fields;

// The %& flag of the line format: this thread's reconcile fields.
class ReconcileFieldsFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    dest.append(reconcile_fields.data(), reconcile_fields.data() + reconcile_fields.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<ReconcileFieldsFlag>();
  }
};

bool IsPlain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("._:/@+,-").find(c) != std::string_view::npos;
}

}  // namespace

std::unique_ptr<spdlog::formatter> LogLineFormatter() {
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  formatter->add_flag<ReconcileFieldsFlag>('&').set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %n %&%v");
  return formatter;
}

void ConfigureLogging(const std::string& level) {
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::set_formatter(LogLineFormatter());
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

std::string LogValue(std::string_view value) {
  bool plain = !value.empty();
  for (char c : value) plain = plain && IsPlain(c);
  if (plain) return std::string(value);
  std::string out = "\"";
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string NewReconcileId(Env& env) {
  return fmt::format("{:08x}", static_cast<uint32_t>(env.Uniform() * 4294967296.0));
}

ReconcileLogScope::ReconcileLogScope(std::string_view cluster, std::string_view id)
    : previous_(std::move(reconcile_fields)) {
  reconcile_fields = fmt::format("cluster={} reconcile={} ", LogValue(cluster), LogValue(id));
}

ReconcileLogScope::~ReconcileLogScope() { reconcile_fields = std::move(previous_); }

}  // namespace tr::reconciler
