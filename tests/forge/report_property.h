// A property of the pull requests' rollout reports: random sequences of merges (reverts among
// them), rollouts that finish or fail, merged webhooks that never arrive, records repeated and
// reporter restarts, on a fleet of three clusters whose statuses are recorded as the
// reconciler records them (every cluster attempts the newest commit; a cluster a merge does not
// change stays Ready on it). Afterwards every pull request's `talos-reconciler/rollout` status
// and comment must say what the recorded history says happened to its change (applied, failed,
// superseded by the next pull request that changed one of its clusters first, or still
// pending), and no report, once final, may ever have changed.
//
// The reporter is the real PullRequestFlow against the fake forge over loopback HTTP. Used by
// forge_tests (fixed seeds) and by report_property_bench (random seeds, longer runs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tr::reconciler::pull_requests::report_property {

struct PropertyRun {
  uint64_t seed = 1;
  int steps = 30;  // merges, rollout ends, restarts and repeated records
};

struct PropertyResult {
  std::vector<std::string> violations;  // empty: the property held
  int merges = 0;
  int restarts = 0;
  std::string trace;  // the steps taken, for a failure's message
};

PropertyResult RunReportProperty(const PropertyRun& run);

}  // namespace tr::reconciler::pull_requests::report_property
