#include "core/workload_readiness.h"

#include "fmt/format.h"

namespace tr::core {
namespace {

std::string Why(const WorkloadStatus& w) {
  if (w.observed_generation < w.generation) {
    return fmt::format("generation {} not yet observed (at {})", w.generation,
                       w.observed_generation);
  }
  if (w.updated < w.desired) return fmt::format("{} of {} updated", w.updated, w.desired);
  // Deployments and DaemonSets keep old pods while rolling; StatefulSets replace in place.
  if (w.kind != "StatefulSet" && w.current > w.updated) {
    return fmt::format("{} old replicas pending termination", w.current - w.updated);
  }
  if (w.ready < w.desired) return fmt::format("{} of {} ready", w.ready, w.desired);
  if (w.kind != "StatefulSet" && w.available < w.desired) {
    return fmt::format("{} of {} available", w.available, w.desired);
  }
  return "";
}

}  // namespace

std::string WorkloadNotReady(const WorkloadStatus& workload) {
  std::string why = Why(workload);
  if (why.empty()) return why;
  return fmt::format("{} {}/{}: {}", workload.kind, workload.namespace_name, workload.name, why);
}

}  // namespace tr::core
