#include "gitsource/status_refspec.h"

#include <git2.h>

#include "fmt/format.h"
#include "gitsource/libgit2_util.h"

namespace tr::gitsource {
namespace {

bool IsValidBranch(std::string_view branch) {
  EnsureLibgit2();
  int valid = 0;
  const std::string ref = fmt::format("refs/heads/{}", branch);
  return !branch.empty() && branch.front() != '-' &&
         git_reference_name_is_valid(&valid, ref.c_str()) == 0 && valid == 1;
}

// True when one branch is the other or lives in its namespace ("a" and "a/b").
bool Overlap(std::string_view a, std::string_view b) {
  if (a.size() > b.size()) std::swap(a, b);
  return b == a || (b.starts_with(a) && b[a.size()] == '/');
}

}  // namespace

absl::Status ValidateStatusBranch(std::string_view status_branch, std::string_view desired_branch) {
  if (!IsValidBranch(status_branch)) {
    return absl::InvalidArgumentError(
        fmt::format("status branch '{}' is not a valid branch name", status_branch));
  }
  if (Overlap(status_branch, desired_branch)) {
    return absl::InvalidArgumentError(
        fmt::format("status branch '{}' must differ from the desired-state branch '{}'",
                    status_branch, desired_branch));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> StatusPushRefspec(std::string_view status_branch,
                                              std::string_view desired_branch) {
  if (absl::Status s = ValidateStatusBranch(status_branch, desired_branch); !s.ok()) return s;
  return fmt::format("{}:refs/heads/{}", kStatusOutgoingRef, status_branch);
}

absl::Status CheckStatusPushRefspec(std::string_view refspec, std::string_view status_branch,
                                    std::string_view desired_branch) {
  absl::StatusOr<std::string> expected = StatusPushRefspec(status_branch, desired_branch);
  if (!expected.ok() || refspec != *expected) {
    return absl::FailedPreconditionError(
        fmt::format("refusing to push '{}': the reconciler only pushes {}:refs/heads/{}", refspec,
                    kStatusOutgoingRef, status_branch));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ProposalPushRefspec(std::string_view branch,
                                                std::string_view desired_branch,
                                                std::string_view status_branch) {
  if (!IsValidBranch(branch) || !branch.starts_with(kProposalBranchNamespace) ||
      branch.size() == kProposalBranchNamespace.size()) {
    return absl::InvalidArgumentError(fmt::format(
        "proposal branch '{}' is not a valid branch name under {}", branch,
        kProposalBranchNamespace));
  }
  if (Overlap(branch, desired_branch) || Overlap(branch, status_branch)) {
    return absl::InvalidArgumentError(fmt::format(
        "proposal branch '{}' must differ from the desired-state branch '{}' and the status "
        "branch '{}'",
        branch, desired_branch, status_branch));
  }
  return fmt::format("+{}:refs/heads/{}", kProposalOutgoingRef, branch);
}

absl::Status CheckProposalPushRefspec(std::string_view refspec, std::string_view branch,
                                      std::string_view desired_branch,
                                      std::string_view status_branch) {
  absl::StatusOr<std::string> expected =
      ProposalPushRefspec(branch, desired_branch, status_branch);
  if (!expected.ok() || refspec != *expected) {
    return absl::FailedPreconditionError(fmt::format(
        "refusing to push '{}': proposals are only pushed as +{}:refs/heads/{}<group>", refspec,
        kProposalOutgoingRef, kProposalBranchNamespace));
  }
  return absl::OkStatus();
}

}  // namespace tr::gitsource
