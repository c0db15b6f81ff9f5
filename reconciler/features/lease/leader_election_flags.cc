#include "reconciler/features/lease/leader_election_flags.h"

#include <unistd.h>

#include <cstdlib>

#include "core/names.h"
#include "reconciler/runtime/flags.h"

namespace tr::reconciler::lease {

using flags::Flag;
using flags::Invalid;
using flags::MillisFlag;

void LeaderElectionFlags::AddFlags(CLI::App& cmd) {
  flags::Switch(cmd, "leader-elect", enabled,
                "Act only while holding a Kubernetes Lease (more than one replica)");
  Flag(cmd, "leader-elect-namespace", namespace_name,
       "Namespace of the Leases (default: the service account's; \"default\" with --kubeconfig)");
  Flag(cmd, "leader-elect-name", name, "Name of the Lease (<name>-shard-<i> with --shards)");
  Flag(cmd, "leader-elect-identity", identity,
       "This replica's holder identity (default: $POD_NAME, else the host name)");
  MillisFlag(cmd, "leader-elect-lease-duration", lease_duration,
             "How long a Lease not renewed stays held (default 15s)");
  MillisFlag(cmd, "leader-elect-renew-deadline", renew_deadline,
             "How long the holder acts after its last renewal (default 10s)");
  MillisFlag(cmd, "leader-elect-retry-period", retry_period,
             "Time between two tries to take or renew a Lease (default 2s)");
  Flag(cmd, "shards", shards,
       "Split the clusters into this many shards, one Lease each (needs --leader-elect)");
}

absl::Status LeaderElectionFlags::Finish() {
  if (shards < 1 || shards > 1024) return Invalid("shards", "1 to 1024");
  if (!enabled) {
    if (shards > 1) return Invalid("shards", "needs --leader-elect");
    return absl::OkStatus();
  }
  if (!core::CheckDns1123Subdomain(name).ok() || name.size() > 200) {
    return Invalid("leader-elect-name", "a DNS subdomain name of at most 200 characters");
  }
  using std::chrono::milliseconds, std::chrono::minutes;
  if (lease_duration < std::chrono::seconds(1) || lease_duration > minutes(10)) {
    return Invalid("leader-elect-lease-duration", "1s to 10m");
  }
  if (retry_period < milliseconds(10) || renew_deadline <= retry_period ||
      lease_duration <= renew_deadline) {
    return Invalid("leader-elect-renew-deadline",
                   "want lease duration > renew deadline > retry period >= 10ms");
  }
  if (identity.empty()) {
    if (const char* pod = std::getenv("POD_NAME"); pod != nullptr) identity = pod;
  }
  if (identity.empty()) {
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) == 0) identity = host;
  }
  if (identity.empty()) {
    return Invalid("leader-elect-identity", "give it (no POD_NAME and no host name)");
  }
  return absl::OkStatus();
}

}  // namespace tr::reconciler::lease
