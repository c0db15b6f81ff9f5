#include "tests/sim/common/journal.h"

#include "fmt/chrono.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tr::sim {
namespace {

// "2026-11-22T03:00:27.123456Z".
std::string Rfc3339Micros(std::chrono::system_clock::time_point t) {
  const auto secs = std::chrono::time_point_cast<std::chrono::seconds>(t);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t - secs).count();
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:06d}Z", secs, micros);
}

}  // namespace

nlohmann::json JournalEntry::ToJson() const {
  nlohmann::json j = {
      {"seq", seq},
      {"time", Rfc3339Micros(time)},
      {"kind", kind == Kind::kCall ? "call" : "state"},
      {"cluster", cluster},
      {"node", node},
      {"what", what},
  };
  if (!role.empty()) j["role"] = role;
  if (!code.empty()) j["code"] = code;
  if (!endpoint.empty()) j["endpoint"] = endpoint;
  if (!detail.empty()) j["detail"] = detail;
  return j;
}

Journal::Journal(std::filesystem::path file) : file_(std::move(file)) {
  if (!file_.empty()) out_.open(file_, std::ios::trunc);
}

void Journal::Record(JournalEntry entry, std::chrono::system_clock::time_point now) {
  std::lock_guard lock(mu_);
  entry.seq = entries_.size() + 1;
  entry.time = now;
  if (out_.is_open()) {
    out_ << entry.ToJson().dump() << '\n';
    out_.flush();
  }
  entries_.push_back(std::move(entry));
  cv_.notify_all();
}

std::vector<JournalEntry> Journal::Entries() const {
  std::lock_guard lock(mu_);
  return entries_;
}

absl::Status Journal::WaitFor(
    const std::function<bool(const std::vector<JournalEntry>&)>& predicate,
    std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  if (cv_.wait_for(lock, timeout, [&] { return predicate(entries_); })) return absl::OkStatus();
  return absl::DeadlineExceededError(
      fmt::format("journal condition not met within {} ms", timeout.count()));
}

}  // namespace tr::sim
