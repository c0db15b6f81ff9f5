// Kubernetes Leases (coordination.k8s.io/v1) of one namespace, read and written with optimistic
// concurrency: every write carries the resourceVersion it was based on, so of two replicas
// writing the same Lease at once exactly one wins. Times are RFC 3339 with microseconds
// (MicroTime), as the API server stores them.
//
// Errors (from the KubeClient): NotFound from Get is not an error (nullopt); Create of a taken
// name is AlreadyExists; Update on a stale resourceVersion is Aborted (409 Conflict);
// Unavailable / DeadlineExceeded when the API server did not answer.
//
// Thread-safety: as safe as the KubeClient it uses (the HTTP one is thread-safe).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "reconciler/clients/kube/kube_client.h"

namespace tr::reconciler::lease {

using TimePoint = std::chrono::system_clock::time_point;

struct LeaseRecord {
  std::string holder;  // spec.holderIdentity; empty: nobody holds it (released)
  std::chrono::seconds duration{15};
  std::optional<TimePoint> acquire_time;
  std::optional<TimePoint> renew_time;
  int transitions = 0;           // spec.leaseTransitions
  std::string resource_version;  // metadata.resourceVersion; empty before it is created
  std::map<std::string, std::string> labels;  // metadata.labels (kept across updates)

  // The same holder, timings and transitions (resourceVersion aside): what an observer
  // compares to tell whether the holder is still renewing.
  bool SameSpec(const LeaseRecord& other) const;
};

// "2026-11-23T10:00:00.123456Z" and back (any RFC 3339 time; fractions beyond microseconds are
// cut). InvalidArgument for anything else.
std::string FormatMicroTime(TimePoint t);
absl::StatusOr<TimePoint> ParseMicroTime(const std::string& text);

// A Lease object as the API answers it. Internal (naming `what`) when it is not a Lease: not
// an object, no metadata or spec object, a duration outside 0..366 days, a time that is not
// RFC 3339; fields of another type count as missing.
absl::StatusOr<LeaseRecord> ParseLease(std::string_view text, const std::string& what);

class LeaseClient {
 public:
  // `namespace_name`'s Leases through `kube` (not owned; outlives this).
  LeaseClient(kube::KubeClient& kube, std::string namespace_name)
      : kube_(kube), namespace_(std::move(namespace_name)) {}

  // The Lease `name`, nullopt when there is none. Internal when the answer is not a Lease.
  absl::StatusOr<std::optional<LeaseRecord>> Get(const std::string& name);
  // Creates `name` with `record`; the stored record (with its resourceVersion).
  absl::StatusOr<LeaseRecord> Create(const std::string& name, const LeaseRecord& record);
  // Replaces `name` with `record`, conditional on record.resource_version.
  absl::StatusOr<LeaseRecord> Update(const std::string& name, const LeaseRecord& record);
  // The Leases whose labels match `label_selector` ("key=value"), with their names.
  absl::StatusOr<std::vector<std::pair<std::string, LeaseRecord>>> List(
      const std::string& label_selector);

  const std::string& namespace_name() const { return namespace_; }

 private:
  std::string Path(const std::string& name) const;

  kube::KubeClient& kube_;
  const std::string namespace_;
};

}  // namespace tr::reconciler::lease
