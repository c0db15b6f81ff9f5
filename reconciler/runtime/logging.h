// Structured logs: one spdlog logger per module, lines of key=value fields. Secrets are never
// passed to a logger.
//
// A field's value goes through LogValue, so a value read from outside (an error message, a
// file name, a profile's text) cannot end its field, add a field or start a line. Every line
// logged on a thread while a ReconcileLogScope lives there carries `cluster=<name>
// reconcile=<id>` after the module, so the lines of one reconcile can be followed (the
// controller opens one around each reconcile).
//
// Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/env.h"
#include "base/mutex.h"
#include "spdlog/spdlog.h"

namespace tr::reconciler {

// Sets the level of every logger ("trace" ... "error") and the line format, to stderr:
// "text": `2026-11-22T03:00:00.123Z level module [cluster=.. reconcile=..] message`;
// "json": one object a line, {"time", "level", "module", "cluster", "reconcile", and each
// key=value field of the message}, or "msg" for a message that is not key=value fields.
void ConfigureLogging(const std::string& level, const std::string& format = "text");

// The logger of `module` ("controller", "rollout", "git", "http"), made on first use.
std::shared_ptr<spdlog::logger> ModuleLogger(const std::string& module);

// The line formats of ConfigureLogging, for a sink added later (a test's capture).
std::unique_ptr<spdlog::formatter> LogLineFormatter();
std::unique_ptr<spdlog::formatter> JsonLogLineFormatter();

// The key=value fields of a message written with LogValue (quoted values unescaped); nullopt
// when the message is not made of such fields.
std::optional<std::vector<std::pair<std::string, std::string>>> ParseLogFields(
    std::string_view message);

// `value` as a field value: bare when it is a non-empty plain token (letters, digits and
// . _ : / @ + , -), otherwise in double quotes with \ and " escaped and control characters
// written as \n, \r, \t or \xNN.
std::string LogValue(std::string_view value);

// Lines a stranger can cause at will (a refused request, a bad signature) go through a
// throttle: at most one line per key (a refusal's reason, never anything the stranger chooses)
// per interval; the lines held back are counted and the next line that goes out says how many
// (`suppressed=N`). Thread-safe.
class LogThrottle {
 public:
  LogThrottle(std::chrono::milliseconds interval, Env& env);
  // The number of lines of `key` held back since its last line when this one may go out;
  // nullopt when it is to be held back too.
  std::optional<std::size_t> Admit(std::string_view key);

 private:
  struct Key {
    Env::TimePoint last;
    std::size_t held_back = 0;
  };
  const std::chrono::milliseconds interval_;
  Env& env_;
  Mutex mu_;
  std::map<std::string, Key, std::less<>> keys_ ABSL_GUARDED_BY(mu_);
};

// A new reconcile id: 8 hex digits from `env`'s randomness.
std::string NewReconcileId(Env& env);

// While it lives, lines logged on this thread carry `cluster=<cluster> reconcile=<id>`. Scopes
// nest (the inner one wins until it ends). Not movable: it belongs to one thread's stack.
class ReconcileLogScope {
 public:
  ReconcileLogScope(std::string_view cluster, std::string_view id);
  ~ReconcileLogScope();
  ReconcileLogScope(const ReconcileLogScope&) = delete;
  ReconcileLogScope& operator=(const ReconcileLogScope&) = delete;

 private:
  std::string previous_;
  std::string previous_cluster_;
  std::string previous_id_;
};

}  // namespace tr::reconciler
