// `talos-reconciler run`: wires the real implementations together — the Git source and status
// writer, the Talos and Kubernetes clients, the controller with its workers, the poll loop and
// the HTTP endpoints (/healthz, /readyz, /metrics) — and runs until SIGTERM or SIGINT.
#pragma once

#include "reconciler/app/daemon/daemon_config.h"

namespace tr::reconciler {

// Returns the process exit code: 0 after a clean stop, 1 when start-up fails.
int RunDaemon(const DaemonConfig& config);

}  // namespace tr::reconciler
