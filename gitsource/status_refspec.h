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

}  // namespace tr::gitsource
