// HttpKubeClient's pending-install mark (SetPendingInstall, KubeNode::pending_install) against
// talos-sim's Kubernetes API over real HTTPS on loopback: a merge patch sets the annotation and
// the pending-reboot label, ListNodes reads them back, a second one removes both, and nothing
// else of the Node changes.
#include <gtest/gtest.h>

#include "core/pending_mark.h"
#include "nlohmann/json.hpp"
#include "reconciler/clients/kube/kube_client.h"
#include "tests/support/sim_fixture.h"

namespace tr::reconciler::talos {
namespace {

using nlohmann::json;

class KubePendingInstallTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("1.13.2", "1.13.2")));
    ASSERT_NO_FATAL_FAILURE(NewKubeClient("prod", &kube_));
  }

  // The node `name` as ListNodes reads it.
  kube::KubeNode Listed(const std::string& name) {
    absl::StatusOr<std::vector<kube::KubeNode>> nodes = kube_->ListNodes();
    EXPECT_TRUE(nodes.ok()) << nodes.status();
    const kube::KubeNode* node = nodes.ok() ? kube::FindKubeNode(*nodes, name, "") : nullptr;
    EXPECT_NE(node, nullptr) << name;
    return node != nullptr ? *node : kube::KubeNode{};
  }

  // The node's labels (or annotations) as the API serves them.
  json Metadata(const std::string& name, const char* field) {
    absl::StatusOr<std::string> text = kube_->GetObject("/api/v1/nodes/" + name);
    EXPECT_TRUE(text.ok()) << text.status();
    if (!text.ok()) return json::object();
    return json::parse(*text)["metadata"].value(field, json::object());
  }

  std::unique_ptr<kube::KubeClient> kube_;
};

TEST_F(KubePendingInstallTest, SetsReadsAndRemovesTheMarkAndItsLabel) {
  const std::string label(core::kPendingRebootLabel);
  const std::string annotation(core::kPendingInstallAnnotation);
  const std::string mark = core::EncodePendingMark(
      {*core::ParseTalosVersion("1.13.9"), std::string(64, 'a'), "0f3c9a6e-2b1d-4c7e"});
  EXPECT_EQ(Listed("w-1").pending_install, std::nullopt);
  const json labels_before = Metadata("w-1", "labels");

  ASSERT_TRUE(kube_->SetPendingInstall("w-1", mark).ok());
  EXPECT_EQ(Listed("w-1").pending_install, mark);
  EXPECT_EQ(Listed("cp-1").pending_install, std::nullopt);
  json labels = Metadata("w-1", "labels");
  EXPECT_EQ(labels[label], "true");
  labels.erase(label);
  EXPECT_EQ(labels, labels_before);  // the others kept
  EXPECT_TRUE(Listed("w-1").ready);

  // Written again with another value: replaced.
  const std::string again = core::EncodePendingMark({*core::ParseTalosVersion("1.13.8"), "", ""});
  ASSERT_TRUE(kube_->SetPendingInstall("w-1", again).ok());
  EXPECT_EQ(Listed("w-1").pending_install, again);

  ASSERT_TRUE(kube_->SetPendingInstall("w-1", std::nullopt).ok());
  EXPECT_EQ(Listed("w-1").pending_install, std::nullopt);
  EXPECT_EQ(Metadata("w-1", "labels"), labels_before);
  EXPECT_FALSE(Metadata("w-1", "annotations").contains(annotation));
  // Removing what is not there is no error (a merge patch's null of a missing key).
  EXPECT_TRUE(kube_->SetPendingInstall("w-1", std::nullopt).ok());
}

TEST_F(KubePendingInstallTest, AnUnknownNodeIsNotFound) {
  EXPECT_EQ(kube_->SetPendingInstall("w-9", "v1.13.9").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(kube_->SetPendingInstall("w-9", std::nullopt).code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tr::reconciler::talos
