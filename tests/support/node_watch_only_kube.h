// A KubeClient for informer tests: what a test scripts is the Nodes' list and watch
// (ListNodesVersioned, WatchNodes); every other call answers Unimplemented, so a test that
// reaches one fails loudly instead of reading a made-up answer.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reconciler/clients/kube/kube_client.h"

namespace tr::test_support {

class NodeWatchOnlyKube : public reconciler::kube::KubeClient {
 public:
  absl::StatusOr<std::vector<reconciler::kube::KubeNode>> ListNodes() override {
    return absl::UnimplementedError("ListNodes");
  }
  absl::Status SetUnschedulable(const std::string&, bool) override {
    return absl::UnimplementedError("SetUnschedulable");
  }
  absl::Status SetPendingInstall(const std::string&, const std::optional<std::string>&) override {
    return absl::UnimplementedError("SetPendingInstall");
  }
  absl::StatusOr<std::vector<reconciler::kube::KubePod>> ListPodsOnNode(
      const std::string&) override {
    return absl::UnimplementedError("ListPodsOnNode");
  }
  absl::Status EvictPod(const std::string&, const std::string&) override {
    return absl::UnimplementedError("EvictPod");
  }
};

}  // namespace tr::test_support
