// How the reconciler answers an error, decided by one table for every part that meets one: the
// observer, the executor, the status writer, the source poller, the forge client and the
// notification senders. The table reads canonical codes only (base/http_outcome.h turns an
// HTTP answer into one; each adapter marks what only the other side's words tell apart), and
// answers by what should happen next:
//
//   retry  nothing was decided (no answer, a deadline, the server's trouble): try again later,
//          with backoff.
//   busy   the other side is busy and says so: a server asked us to wait (a rate limit of a
//          call or a delivery: wait as long as it asked), or a node is already doing what it
//          was asked (a payload the Talos adapter sets, reconciler/clients/talos/
//          talos_answers.h, which operations/error_class.h reads: look again on the node poll
//          interval). Not a failed attempt.
//   halt   a node or an API refused a step of an upgrade: the cluster goes UpgradeFailed with
//          that cause and no further node is touched until the desired version changes.
//   stall  time does not fix it (unusable credentials, a role that may not read, bad input):
//          stop, and hand the error to whoever must change the input.
//
// Pure; thread-safe.
#pragma once

#include "absl/status/status.h"

namespace tr::reconciler {

enum class ErrorClass { kRetry, kBusy, kHalt, kStall };
// "retry", "busy", "halt", "stall".
const char* ErrorClassName(ErrorClass error_class);

// Where the error arose:
//   observe  observing a cluster, which touches nothing;
//   act      a step of a node's upgrade;
//   record   writing the status branch (always retried);
//   load     reading the profile repository or the status branch (stalled only on what needs a
//            person: bad input or credentials, corrupt data);
//   call     a request whose answer the caller needs (the forge's REST API): retried while
//            nothing answered, busy (waited out) when rate-limited, else stopped and returned;
//   deliver  a notification kept in the spool until it is delivered: every failure is an
//            attempt retried with backoff (dropped after the last), a rate limit is busy.
enum class ErrorSource { kObserve, kAct, kRecord, kLoad, kCall, kDeliver };

// The class of an error of `code` (not OK) that arose at `source`: the one table (error_class.cc).
// A code the table does not hold (one absl may add) is read as Unknown.
ErrorClass ClassOfCode(absl::StatusCode code, ErrorSource source);

}  // namespace tr::reconciler
