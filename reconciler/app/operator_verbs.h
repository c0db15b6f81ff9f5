// `talos-reconciler pause CLUSTER`, `resume CLUSTER` and `retry CLUSTER`: the operator's verbs,
// kept in Git. Each edits clusters/<cluster>.yaml of a checkout of the profile repository (pause
// and resume set spec.policy.paused; retry sets the annotation talos-reconciler.dev/retry to a
// new token, the time now, which lifts a failure's halt: core/rollout_record.h) and commits that
// one file with `git commit`, so the commit's author says who (the person's own Git identity and
// signing) and its message why (--reason); --push pushes it as `git push` would.
// Flux's suspend and resume change the cluster's objects and leave nothing in Git; here Git stays
// the source of truth, and branch protection, review and revert work as for any change.
//
// Thread-compatible; runs `git`.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

namespace tr::reconciler {

struct OperatorVerbOptions {
  std::string verb;     // "pause", "resume" or "retry"
  std::string cluster;  // metadata.name: the file clusters/<cluster>.yaml
  std::string reason;   // why: the commit message's subject ends with it
  std::filesystem::path dir = ".";  // the checkout
  bool push = false;
  std::string retry_token;  // retry: the token to write (the CLI gives the time now, UTC)
};

// 0 after committing (and pushing); 0 without a commit when the profile already says so. 1
// after printing why on `err`: no such profile, a profile the edit cannot handle, a failed
// `git commit` or `git push` (its output passed on).
int RunOperatorVerb(const OperatorVerbOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tr::reconciler
