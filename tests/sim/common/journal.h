// The simulator's journal: one entry per API call a node served (or refused) and per state
// change of a node, with timestamps and a global sequence number, so tests can check ordering
// invariants ("never two control planes down at once", "pull before upgrade before reboot").
// Entries are kept in memory and, when a path is given, appended to a JSON-lines file.
//
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json_fwd.hpp"

namespace tr::sim {

// What a kCall entry's detail begins with for a one-to-many call (apid's `nodes` metadata):
// the call a client made (on the endpoint it dialled, naming the nodes), and each of its parts
// (on the node that served it, or on the endpoint when it could not dial the node). A client's
// calls are the entries that are not parts.
inline constexpr char kFanoutCall[] = "one-to-many: ";
inline constexpr char kFanoutPart[] = "part of one-to-many: ";

struct JournalEntry {
  enum class Kind { kCall, kState };

  uint64_t seq = 0;  // 1, 2, 3, ... in the order entries were written
  std::chrono::system_clock::time_point time;
  Kind kind = Kind::kCall;
  std::string cluster;
  std::string node;  // the node that served the call or changed state
  // kCall: the gRPC method ("/machine.MachineService/Upgrade") or "kube:<VERB> <path>" for the
  // fake Kubernetes API; kState: what changed ("stage", "down", "up", "version", "cordon",
  // "uncordon", "slot", "etcd-leader", "fault", "evict", ...).
  std::string what;
  std::string role;      // kCall: the caller's role ("os:admin", ...); empty for kState
  std::string code;      // kCall: gRPC code name ("OK", "UNAVAILABLE") or HTTP status ("429")
  std::string endpoint;  // kCall: the node the client dialled when it was forwarded by apid
  std::string detail;    // free text: error message, new stage, new version, ...

  nlohmann::json ToJson() const;
};

class Journal {
 public:
  // `file` empty: memory only. Otherwise the file is created (truncated) and every entry is
  // appended as one JSON line and flushed.
  explicit Journal(std::filesystem::path file = {});

  // Stamps `entry` with the next sequence number and `now`, stores it and wakes waiters.
  void Record(JournalEntry entry, std::chrono::system_clock::time_point now);

  // A copy of every entry so far, in order.
  std::vector<JournalEntry> Entries() const;

  // Blocks until `predicate` holds for the entries so far or `timeout` passes (real time).
  // DeadlineExceeded on timeout.
  absl::Status WaitFor(const std::function<bool(const std::vector<JournalEntry>&)>& predicate,
                       std::chrono::milliseconds timeout) const;

  const std::filesystem::path& file() const { return file_; }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<JournalEntry> entries_;
  std::filesystem::path file_;
  std::ofstream out_;
};

}  // namespace tr::sim
