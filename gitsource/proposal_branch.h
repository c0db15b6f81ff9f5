// Proposal branches: the commits that bump versions in profiles, pushed to
// `talos-reconciler/update/<group>` for a pull request to merge (reconciler/features/proposals).
//
// A proposal commit is built on a commit of the desired-state branch (the one the proposal was
// worked out from) with the given files replaced, authored by the reconciler. Publishing it:
//  - a remote branch that already holds exactly that change on that base is left alone;
//  - a branch whose tip the reconciler did not write (someone pushed a fix to it) is not
//    overwritten: FailedPrecondition, so people keep what they did. "Wrote" means the publisher
//    recorded that commit id when it pushed it — never the commit's author or committer, which
//    anyone can set. The record is kept in memory and, when given a file, across restarts; a
//    tip it does not know (the file lost with the pod) is left alone like anyone's;
//  - otherwise the branch is replaced with force-with-lease: the push is refused unless the
//    remote still has the tip just read (a compare-and-swap at the wire).
// Only branches under kProposalBranchNamespace are ever pushed (gitsource/status_refspec.h).
//
// Thread-safe (the mirror's lock serialises repository access).
#pragma once

#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <stop_token>
#include <string>

#include "absl/status/statusor.h"
#include "base/env.h"
#include "base/mutex.h"

namespace tr::gitsource {

class LibGitSource;
class Mirror;

struct ProposalCommit {
  std::string branch;       // under talos-reconciler/update/
  std::string base_commit;  // full hex id of a desired-state commit the mirror holds
  std::map<std::string, std::string> files;  // repository path -> new content
  std::string message;
};

struct ProposalPush {
  std::string commit;    // the branch's tip (full hex id)
  bool created = false;  // false when the branch already held this change
};

struct ProposalIdentity {
  std::string name = "talos-reconciler";
  std::string email = "talos-reconciler@localhost";
};

class ProposalPublisher {
 public:
  virtual ~ProposalPublisher() = default;
  virtual absl::StatusOr<ProposalPush> Publish(const ProposalCommit& proposal,
                                               std::stop_token stop) = 0;
};

class GitProposalPublisher final : public ProposalPublisher {
 public:
  // Shares the source's mirror and remote. `status_branch` is named so that no proposal
  // branch may overlap it. `env` (commit times) must outlive the publisher. `record_file`
  // keeps the ids of the commits it pushed across restarts (empty: in memory only).
  GitProposalPublisher(const LibGitSource& source, std::string status_branch,
                       ProposalIdentity identity, Env& env,
                       std::filesystem::path record_file = {});

  absl::StatusOr<ProposalPush> Publish(const ProposalCommit& proposal,
                                       std::stop_token stop) override;

 private:
  const std::shared_ptr<Mirror> mirror_;
  const std::string desired_branch_;
  const std::string status_branch_;
  // The ids of the commits this publisher pushed, newest last (at most kRecorded).
  bool Wrote(const std::string& commit) const;
  void Record(const std::string& commit);
  static constexpr size_t kRecorded = 256;

  const ProposalIdentity identity_;
  Env& env_;
  const std::filesystem::path record_file_;
  mutable Mutex mu_;
  std::deque<std::string> written_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::gitsource
