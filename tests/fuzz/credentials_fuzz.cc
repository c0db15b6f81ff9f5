// The credential files the operator mounts: a talosconfig and a kubeconfig (the latter also
// comes from a node, through the Talos Kubeconfig call).
#include "reconciler/clients/kube/kubeconfig.h"
#include "reconciler/clients/talos/talosconfig.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tr::fuzz::Selected selected = tr::fuzz::Select(data, size, 2);
  if (selected.choice == 0) {
    const auto config = tr::reconciler::talos::ParseTalosConfig(selected.rest, "talosconfig");
    if (config.ok()) (void)config->Context();
  } else {
    (void)tr::reconciler::kube::ParseKubeconfig(selected.rest);
  }
  return 0;
}
