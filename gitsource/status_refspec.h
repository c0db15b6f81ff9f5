// The only push refspec the reconciler ever uses, built in one place and checked again
// right before every push: it sends our private outgoing ref to `refs/heads/<status
// branch>`, never with '+' (force), never to the desired-state branch, never to anything
// else. The push itself is also refused unless it is a fast-forward (see RemoteClient).
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tr::gitsource {

// Where a status commit is held locally before it is pushed.
inline constexpr std::string_view kStatusOutgoingRef = "refs/talos-reconciler/status-outgoing";

// InvalidArgument unless `status_branch` is a valid branch name distinct from
// `desired_branch` (neither equal nor one inside the other's namespace).
absl::Status ValidateStatusBranch(std::string_view status_branch, std::string_view desired_branch);

// "refs/talos-reconciler/status-outgoing:refs/heads/<status_branch>", or InvalidArgument as
// ValidateStatusBranch.
absl::StatusOr<std::string> StatusPushRefspec(std::string_view status_branch,
                                              std::string_view desired_branch);

// OK only for exactly the refspec StatusPushRefspec returns for these branches.
// FailedPrecondition otherwise (a force, another destination, a wildcard…).
absl::Status CheckStatusPushRefspec(std::string_view refspec, std::string_view status_branch,
                                    std::string_view desired_branch);

// Where a proposal commit is held locally before it is pushed.
inline constexpr std::string_view kProposalOutgoingRef =
    "refs/talos-reconciler/proposal-outgoing";
// Every proposal branch lives here, and the reconciler pushes to no other branch but the
// status branch.
inline constexpr std::string_view kProposalBranchNamespace = "talos-reconciler/update/";

// "+refs/talos-reconciler/proposal-outgoing:refs/heads/<branch>" for a valid branch in
// kProposalBranchNamespace that overlaps neither the desired-state nor the status branch;
// InvalidArgument otherwise. The '+' lets a proposal be rebuilt on a newer desired-state
// commit; the push is still a compare-and-swap on the tip last seen (RemoteClient::Push).
absl::StatusOr<std::string> ProposalPushRefspec(std::string_view branch,
                                                std::string_view desired_branch,
                                                std::string_view status_branch);

// OK only for exactly the refspec ProposalPushRefspec returns; FailedPrecondition otherwise.
absl::Status CheckProposalPushRefspec(std::string_view refspec, std::string_view branch,
                                      std::string_view desired_branch,
                                      std::string_view status_branch);

}  // namespace tr::gitsource
