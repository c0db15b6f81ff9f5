#include "reconciler/clients/kube/kube_client.h"

#include <algorithm>

namespace tr::reconciler::kube {

const KubeNode* FindKubeNode(const std::vector<KubeNode>& nodes, std::string_view name,
                             std::string_view address) {
  for (const KubeNode& n : nodes) {
    if (n.name == name) return &n;
  }
  for (const KubeNode& n : nodes) {
    if (std::find(n.addresses.begin(), n.addresses.end(), address) != n.addresses.end()) return &n;
  }
  return nullptr;
}

}  // namespace tr::reconciler::kube
