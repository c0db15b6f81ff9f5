// How the reconciler answers an error, decided in one place for the observer, the executor and
// the reconcile loop: by what should happen next, not by where the error came from.
//
//   retry  the node or an API could not be reached (Unavailable, DeadlineExceeded, Cancelled,
//          Aborted, ResourceExhausted): try again later, with backoff; nothing was decided.
//   busy   the node is already doing what it was asked (Talos: "another installation/upgrade
//          is already in progress", e.g. an install a killed process started, as the Talos
//          adapter marks it: talos_answers.h): look again on the node poll interval; not an
//          error.
//   halt   a node or an API refused a step of an upgrade (a bad installer image, failed etcd
//          checks, an installer exiting non-zero, a drain that PodDisruptionBudgets hold past
//          --drain-timeout): the cluster goes UpgradeFailed with that cause and no further node
//          is touched until the desired version changes.
//   stall  observing failed for a reason time does not fix (unusable credentials, a role that
//          may not read a node): the cluster is Blocked until the input changes.
//
// Pure; thread-safe.
#pragma once

#include "absl/status/status.h"

namespace tr::reconciler {

enum class ErrorClass { kRetry, kBusy, kHalt, kStall };
const char* ErrorClassName(ErrorClass error_class);  // "retry", "busy", "halt", "stall"

// Where the error arose: observing touches nothing; acting is a step of a node's upgrade;
// recording writes the status branch (always retried); loading reads the profile repository
// or the status branch (stalled only on what needs a person: bad input or credentials,
// corrupt data).
enum class ErrorSource { kObserve, kAct, kRecord, kLoad };

// The class of a non-OK `status` that arose at `source`: one table of canonical codes by
// source (error_class.cc), and the payloads a client marks (talos_answers.h).
ErrorClass ClassifyError(const absl::Status& status, ErrorSource source);

}  // namespace tr::reconciler
