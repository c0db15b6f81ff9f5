#include "reconciler/runtime/logging.h"

#include <cctype>
#include <ctime>
#include <mutex>

#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"

namespace tr::reconciler {
namespace {

// "cluster=<name> reconcile=<id> " while a ReconcileLogScope lives on this thread, else empty;
// and the two values themselves, for JSON lines.
thread_local std::string reconcile_fields;
thread_local std::string reconcile_cluster;
thread_local std::string reconcile_id;

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

// One JSON object a line; the message's key=value fields become members.
class JsonLineFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    nlohmann::ordered_json line;  // time, level, module first, as in text lines
    line["time"] = FormatUtc(msg.time);
    line["level"] = std::string(spdlog::level::to_string_view(msg.level).data(),
                                spdlog::level::to_string_view(msg.level).size());
    line["module"] = std::string(msg.logger_name.data(), msg.logger_name.size());
    if (!reconcile_id.empty()) {
      line["cluster"] = reconcile_cluster;
      line["reconcile"] = reconcile_id;
    }
    const std::string_view text(msg.payload.data(), msg.payload.size());
    auto fields = ParseLogFields(text);
    if (fields) {
      for (auto& [key, value] : *fields) line[key] = std::move(value);
    } else {
      line["msg"] = std::string(text);
    }
    const std::string out =
        line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    dest.append(out.data(), out.data() + out.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonLineFormatter>();
  }

 private:
  static std::string FormatUtc(spdlog::log_clock::time_point t) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch());
    const std::time_t seconds = static_cast<std::time_t>(ms.count() / 1000);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                       utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                       ms.count() % 1000);
  }
};

// A value after `=`: bare up to the next space, or quoted with LogValue's escapes. Advances `at`;
// nullopt when a quote is not closed.
std::optional<std::string> ReadLogValue(std::string_view text, size_t& at) {
  std::string value;
  if (at >= text.size() || text[at] != '"') {
    while (at < text.size() && text[at] != ' ') value += text[at++];
    return value;
  }
  for (++at; at < text.size(); ++at) {
    const char c = text[at];
    if (c == '"') {
      ++at;
      return value;
    }
    if (c != '\\' || at + 1 >= text.size()) {
      value += c;
      continue;
    }
    const char e = text[++at];
    if (e == 'x' && at + 2 < text.size() &&
        std::isxdigit(static_cast<unsigned char>(text[at + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[at + 2]))) {
      value += static_cast<char>(std::stoi(std::string(text.substr(at + 1, 2)), nullptr, 16));
      at += 2;
    } else {
      value += e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
    }
  }
  return std::nullopt;
}

bool IsPlain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("._:/@+,-").find(c) != std::string_view::npos;
}

}  // namespace

std::optional<std::vector<std::pair<std::string, std::string>>> ParseLogFields(
    std::string_view text) {
  std::vector<std::pair<std::string, std::string>> fields;
  size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && text[at] == ' ') ++at;
    if (at == text.size()) break;
    size_t end = at;
    while (end < text.size() && text[end] != '=' && text[end] != ' ') ++end;
    if (end == at || end == text.size() || text[end] != '=') return std::nullopt;
    std::string key(text.substr(at, end - at));
    at = end + 1;
    std::optional<std::string> value = ReadLogValue(text, at);
    if (!value || (at < text.size() && text[at] != ' ')) return std::nullopt;
    fields.emplace_back(std::move(key), *std::move(value));
  }
  if (fields.empty()) return std::nullopt;
  return fields;
}

std::unique_ptr<spdlog::formatter> JsonLogLineFormatter() {
  return std::make_unique<JsonLineFormatter>();
}

std::unique_ptr<spdlog::formatter> LogLineFormatter() {
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  formatter->add_flag<ReconcileFieldsFlag>('&').set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %n %&%v");
  return formatter;
}

void ConfigureLogging(const std::string& level, const std::string& format) {
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::set_formatter(format == "json" ? JsonLogLineFormatter() : LogLineFormatter());
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
    : previous_(std::move(reconcile_fields)),
      previous_cluster_(std::move(reconcile_cluster)),
      previous_id_(std::move(reconcile_id)) {
  reconcile_fields = fmt::format("cluster={} reconcile={} ", LogValue(cluster), LogValue(id));
  reconcile_cluster = std::string(cluster);
  reconcile_id = std::string(id);
}

ReconcileLogScope::~ReconcileLogScope() {
  reconcile_fields = std::move(previous_);
  reconcile_cluster = std::move(previous_cluster_);
  reconcile_id = std::move(previous_id_);
}

LogThrottle::LogThrottle(std::chrono::milliseconds interval, Env& env)
    : interval_(interval), env_(env) {}

std::optional<std::size_t> LogThrottle::Admit(std::string_view key) {
  const Env::TimePoint now = env_.Now();
  MutexLock lock(mu_);
  auto it = keys_.find(key);
  if (it == keys_.end()) {
    keys_.emplace(std::string(key), Key{now, 0});
    return 0;
  }
  if (now - it->second.last < interval_) {
    ++it->second.held_back;
    return std::nullopt;
  }
  const std::size_t held_back = it->second.held_back;
  it->second = Key{now, 0};
  return held_back;
}

}  // namespace tr::reconciler
