// `propose DIR --dry-run`: the release proposals the daemon would make now
// (core/proposals.h), for people who want to see them before turning proposals on. The
// fleet is observed as `plan` observes it (--observed FILE or live credentials), since a
// group is proposed only once its clusters run what their profiles ask.
//
// Thread-compatible.
#pragma once

#include <ostream>
#include <string>

#include "base/env.h"
#include "core/observed_decode.h"
#include "core/proposals.h"
#include "reconciler/features/plan/plan_engine.h"

namespace tr::reconciler::proposals {

enum class ProposeFormat { kText, kJson };

struct ProposeOptions {
  PlanOptions input;  // dir, shards, and how the fleet is observed
  ProposeFormat format = ProposeFormat::kText;
  bool dry_run = false;  // required for now: the daemon makes proposals, the command shows them
};

// What every node of `observed` runs, when they agree and every node was seen.
core::RunningVersions RunningOf(const core::ObservedCluster& observed);

// Every release the profile set's catalog knows (built in, plus reconciler.yaml's releases).
// The dry run counts them as old enough: the daemon measures a release's age from when it
// first saw it, which a one-off command cannot know.
core::KnownReleases DryRunReleases(const core::ProfileSet& set);

// "branch talos-reconciler/update/lab: Upgrade lab, staging to Talos 1.12.3" and the clusters,
// then why each other group has none.
std::string RenderProposalsText(const core::ProposalOutcome& outcome);
// {"proposals": [{"branch", "group", "title", "clusters", "talos", "kubernetes"}],
//  "skipped": [{"group", "reason"}]}
std::string RenderProposalsJson(const core::ProposalOutcome& outcome);

// Prints the proposals. kExitOk, or kExitInvalid when a profile, reconciler.yaml or the
// observed input is invalid (nothing is proposed while any profile is invalid: a group
// missing a cluster would be proposed without it).
int RunPropose(const ProposeOptions& options, Env& env, std::ostream& out, std::ostream& err);

}  // namespace tr::reconciler::proposals
