// Waiting for the next request on a kept-alive HTTP connection without waking up.
//
// cpp-httplib 0.11 (Debian bookworm's) waits for a kept-alive connection's next request by
// polling the socket every 10 ms and sleeping 1 ms in between, in every server thread that
// holds an idle connection. A reconciler keeps one connection per cluster's Kubernetes API, so a
// simulated fleet of 200 clusters had ~200 threads waking ~90 times a second: a fifth to a
// quarter of the simulator's CPU in a 200-cluster rollout (perf, docs/benchmarks.md), where a
// real kube-apiserver waits in epoll at no cost. talos-sim's binary replaces httplib's wait
// with WaitForNextRequest (idle_connection_wait_override.cc); what the server does with the
// connection afterwards is unchanged.
//
// Thread-safety: a pure function of its arguments; any thread.
#pragma once

#include <ctime>

namespace tr::sim {

// Blocks until `fd` is readable or closed by the peer (true), or until `timeout_seconds` have
// passed or polling fails (false) — httplib's contract for the wait. A signal does not end the
// wait early.
bool WaitForNextRequest(int fd, time_t timeout_seconds);

}  // namespace tr::sim
