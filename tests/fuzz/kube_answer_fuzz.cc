// What the Kubernetes API and Prometheus answer, as the reconciler decodes it: node, pod and
// workload lists, an error's Status, a line of a watch of Nodes, an upgrade Job with its pods, a Lease, a Prometheus
// query result. None of them may throw, whatever the shape.
#include "nlohmann/json.hpp"
#include "reconciler/clients/kube/kube_json.h"
#include "reconciler/features/k8s_job/upgrade_job.h"
#include "reconciler/features/lease/lease_client.h"
#include "reconciler/operations/gates/probes.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

namespace kube = tr::reconciler::kube;

void DecodeList(unsigned choice, std::string_view text) {
  const nlohmann::json list = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  switch (choice) {
    case 0:
      (void)kube::NodesFromList(list);
      (void)kube::ListVersion(list);
      break;
    case 1:
      (void)kube::PodsFromList(list);
      break;
    case 2:
      (void)kube::PodDetailsFromList(list);
      break;
    case 3:
      (void)kube::WorkloadsFromList("Deployment", list);
      (void)kube::WorkloadFromJson("StatefulSet", list);
      break;
    default:
      (void)kube::WorkloadsFromList("DaemonSet", list);
      (void)kube::ItemCount(list);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tr::fuzz::Selected selected = tr::fuzz::Select(data, size, 9);
  const std::string_view text = selected.rest;
  switch (selected.choice) {
    case 5:  // an error's body, or a line of a watch
      (void)kube::ApiErrorFromBody(text);
      (void)kube::NodeWatchLineFromJson(text);
      break;
    case 6: {  // the Job, a NUL, then its pods
      const size_t nul = text.find('\0');
      const std::string job(text.substr(0, nul));
      const std::string pods(nul == std::string_view::npos ? "{}" : text.substr(nul + 1));
      (void)tr::reconciler::k8s_job::ReadUpgradeJob(job, pods);
      break;
    }
    case 7:
      (void)tr::reconciler::lease::ParseLease(text, "fuzz");
      break;
    case 8:
      (void)tr::reconciler::gates::PrometheusVerdict(200, std::string(text), 1.0);
      break;
    default:
      DecodeList(selected.choice, text);
  }
  return 0;
}
