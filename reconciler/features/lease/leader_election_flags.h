// The settings of leader election and sharding (`run --leader-elect`, `--shards`,
// `--leader-elect-*`): registered and checked here, used by Election::Open. The Kubernetes API
// the Leases live in is the daemon's --kubeconfig (the upgrade Jobs use it too).
//
// Values only; thread-compatible.
#pragma once

#include <chrono>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"

namespace tr::reconciler::lease {

struct LeaderElectionFlags {
  bool enabled = false;        // --leader-elect
  std::string namespace_name;  // empty: the kubeconfig's or service account's
  std::string name = "talos-reconciler";
  std::string identity;  // empty: $POD_NAME, else the host name (filled by Finish)
  std::chrono::milliseconds lease_duration{15'000};
  std::chrono::milliseconds renew_deadline{10'000};
  std::chrono::milliseconds retry_period{2'000};
  int shards = 1;

  void AddFlags(CLI::App& cmd);
  // Ranges (lease duration > renew deadline > retry period >= 10 ms, 1 to 1024 shards, more
  // than one only with --leader-elect, a DNS subdomain name) and the default identity.
  // InvalidArgument naming the flag.
  absl::Status Finish();
};

}  // namespace tr::reconciler::lease
