// Images on a simulated node, on a simulated clock: the registry catalogue, the containerd
// stores a pull lands in, LifecycleService/Upgrade that installs only what is in the requested
// store, and the etcd checks that `preserve` skips only on recent patch releases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/sim/node/sim_cluster.h"

namespace tr::sim {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kFactory =
    "factory.talos.dev/metal-installer/" + std::string(kVanillaSchematic) + ":v1.14.0";

class ImageModelTest : public ::testing::Test {
 protected:
  void Start(const std::string& talos, int control_planes = 1, int workers = 1) {
    clock_ = std::make_shared<ManualScheduler>();  // a previous cluster's steps never run
    ClusterSpec spec;
    spec.name = "prod";
    for (int i = 0; i < control_planes + workers; ++i) {
      NodeSpec n;
      n.name = (i < control_planes ? "cp-" : "w-") + std::to_string(i + 1);
      n.role = i < control_planes ? NodeRole::kControlPlane : NodeRole::kWorker;
      n.talos_version = talos;
      n.kubernetes_version = "1.34.1";
      spec.nodes.push_back(n);
    }
    cluster_ = std::make_unique<SimCluster>(spec, timings_, 1.0, clock_, &journal_);
    std::vector<std::string> addresses;
    for (size_t i = 0; i < spec.nodes.size(); ++i) {
      addresses.push_back("127.0.98." + std::to_string(i + 1));
    }
    cluster_->Boot(addresses);
  }
  SimNode& Worker() { return *cluster_->nodes().back(); }

  // Pulls and returns the final item (the pinned name, or the error).
  ProgressItem Pull(const std::string& image, ImageStore store = ImageStore::kCriSystem) {
    auto box = cluster_->PullImage(Worker(), image, store);
    clock_->AdvanceBy(timings_.image_pull);
    ProgressItem last;
    while (auto item = box->Pop(milliseconds(0))) last = *item;
    return last;
  }
  // Installs and returns the exit code, or the call's error.
  absl::StatusOr<int> Install(const std::string& image, ImageStore store = ImageStore::kCriSystem) {
    auto box = cluster_->LifecycleUpgrade(Worker(), image, store);
    if (!box.ok()) return box.status();
    clock_->AdvanceBy(timings_.install);
    ProgressItem last;
    while (auto item = (*box)->Pop(milliseconds(0))) last = *item;
    if (!last.error.ok()) return last.error;
    return last.exit_code;
  }

  Timings timings_;
  std::shared_ptr<ManualScheduler> clock_ = std::make_shared<ManualScheduler>();
  Journal journal_;
  std::unique_ptr<SimCluster> cluster_;
};

TEST_F(ImageModelTest, LifecycleUpgradeDoesNotPull) {
  Start("v1.13.2");
  auto missing = Install(kFactory);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(missing.status().message(),
            "upgrade failed: installer image \"" + kFactory +
                "\" not found in containerd store: image \"" + kFactory + "\": not found");
  // Pulled into another store (the system containerd's) does not count either.
  ASSERT_TRUE(Pull(kFactory, ImageStore::kSystemInMemory).final);
  EXPECT_EQ(Install(kFactory).status().code(), absl::StatusCode::kInternal);
  ASSERT_TRUE(Pull(kFactory).final);
  auto installed = Install(kFactory);
  ASSERT_TRUE(installed.ok()) << installed.status();
  EXPECT_EQ(*installed, 0);
}

TEST_F(ImageModelTest, TheInMemoryStoreIsEmptiedByAReboot) {
  Start("v1.13.2");
  ASSERT_TRUE(Pull(kFactory, ImageStore::kSystemInMemory).final);
  ASSERT_TRUE(Pull(kFactory, ImageStore::kCriSystem).final);
  ASSERT_TRUE(cluster_->Reboot(Worker()).ok());
  clock_->AdvanceBy(timings_.reboot + timings_.boot);
  ASSERT_TRUE(Worker().up);
  EXPECT_EQ(Install(kFactory, ImageStore::kSystemInMemory).status().code(),
            absl::StatusCode::kInternal);
  auto installed = Install(kFactory, ImageStore::kCriSystem);
  ASSERT_TRUE(installed.ok()) << installed.status();
  EXPECT_EQ(*installed, 0);
}

// The fault hooks for "rebooted between pre-pull and install": the node reboots right after
// answering the pull; with its EPHEMERAL wiped, the CRI store comes back empty and the install
// fails as Talos does until the image is pulled again.
TEST_F(ImageModelTest, ARebootRightAfterThePullAndAWipedEphemeral) {
  Start("v1.13.2");
  ASSERT_TRUE(cluster_->InjectFault(Worker(), {.kind = FaultKind::kRebootAfterPull,
                                               .count = 1,
                                               .delay = {},
                                               .image = "metal-installer"})
                  .ok());
  ASSERT_TRUE(cluster_->InjectFault(Worker(), {.kind = FaultKind::kEphemeralWiped, .count = 1, .delay = {}, .image = {}})
                  .ok());
  const ProgressItem pulled = Pull(kFactory);
  ASSERT_TRUE(pulled.final);
  EXPECT_TRUE(pulled.error.ok());
  EXPECT_FALSE(Worker().up);
  clock_->AdvanceBy(timings_.reboot + timings_.boot);
  ASSERT_TRUE(Worker().up);
  EXPECT_EQ(Worker().boots, 2);
  auto missing = Install(kFactory);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(missing.status().message(), HasSubstr("not found in containerd store"));
  ASSERT_TRUE(Pull(kFactory).final);
  EXPECT_TRUE(Worker().up);  // used up: this pull does not reboot the node
  auto installed = Install(kFactory);
  ASSERT_TRUE(installed.ok()) << installed.status();
  EXPECT_EQ(*installed, 0);
  // Used up too: the next reboot keeps the CRI store.
  ASSERT_TRUE(cluster_->Reboot(Worker()).ok());
  clock_->AdvanceBy(timings_.reboot + timings_.boot + timings_.install);
  ASSERT_TRUE(Worker().up);
  EXPECT_TRUE(cluster_->HasImageLocked(Worker(), ImageStore::kCriSystem, kFactory));
}

TEST_F(ImageModelTest, PullsAreStoredNormalizedAndInstallsLookUpTheRawName) {
  Start("v1.13.2");
  cluster_->set_registry(std::make_shared<RegistryCatalog>(
      std::vector<std::string>{"docker.io/acme/installer:v1.14.0"}, std::set<std::string>{}));
  const ProgressItem pulled = Pull("acme/installer:v1.14.0");
  ASSERT_TRUE(pulled.error.ok()) << pulled.error;
  EXPECT_THAT(pulled.message, StartsWith("docker.io/acme/installer@sha256:"));
  EXPECT_EQ(Install("acme/installer:v1.14.0").status().code(), absl::StatusCode::kInternal);
  auto installed = Install("docker.io/acme/installer:v1.14.0");
  ASSERT_TRUE(installed.ok()) << installed.status();
  EXPECT_EQ(*installed, 0);
}

TEST_F(ImageModelTest, PullsOfImagesTheRegistryDoesNotHaveAreNotFound) {
  Start("v1.13.2");
  const std::string typo = "factory.talos.dev/metal-installer/" +
                           std::string(kVanillaSchematic).substr(1) + "0:v1.14.0";
  const ProgressItem missing = Pull(typo);
  EXPECT_EQ(missing.error.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.error.message(), "error pulling image: failed to pull image \"" + typo +
                                         "\": failed to resolve reference \"" + typo + "\": " +
                                         typo + ": not found");
  EXPECT_EQ(Pull("ghcr.io/siderolabs/installer:v1.14.0").error.code(),
            absl::StatusCode::kNotFound);  // the vanilla installer stops at 1.13
  EXPECT_EQ(Pull("ghcr.io/siderolabs/installer:v1.13.9").error.code(), absl::StatusCode::kOk);
  EXPECT_EQ(Pull("registry.k8s.io/kube-apiserver:v1.35.0").error.code(), absl::StatusCode::kOk);
  EXPECT_EQ(Pull("registry.k8s.io/kube-apiserver:latest").error.code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(Pull("Acme/Installer:v1").error.code(), absl::StatusCode::kUnknown);
}

// preserve skips the mutex and ValidateForUpgrade only from 1.12.9 and 1.13.4
// (v1alpha1_server.go Upgrade); a two-member cluster shows whether the checks ran.
TEST_F(ImageModelTest, PreserveSkipsEtcdChecksOnlyOnRecentPatchReleases) {
  const std::pair<std::string, bool> cases[] = {
      {"v1.11.6", false}, {"v1.12.0", false}, {"v1.12.8", false}, {"v1.12.9", true},
      {"v1.13.0", false}, {"v1.13.3", false}, {"v1.13.4", true},  {"v1.14.0", true}};
  for (const auto& [version, skipped] : cases) {
    Start(version, 2, 0);
    LegacyUpgradeParams p;
    p.image = "ghcr.io/siderolabs/installer:v1.13.9";
    p.preserve = true;
    auto box = cluster_->LegacyUpgrade(*cluster_->nodes()[0], p);
    clock_->AdvanceBy(timings_.image_pull);
    auto result = box->Pop(milliseconds(0));
    ASSERT_TRUE(result.has_value()) << version;
    EXPECT_EQ(result->ok(), skipped) << version;
    if (!skipped) {
      EXPECT_THAT(std::string(result->status().message()),
                  HasSubstr("etcd member count(2) is insufficient"))
          << version;
    }
  }
}

// Below 1.13 the legacy ImagePull lands in the CRI containerd while Upgrade pulls into the
// system one (v1alpha1_images.go vs install/pull.go): the pre-pull does not shorten Upgrade.
TEST_F(ImageModelTest, LegacyPrePullDoesNotShortenTheLegacyUpgrade) {
  Start("v1.12.5", 3, 1);
  const std::string image = "ghcr.io/siderolabs/installer:v1.13.9";
  ASSERT_TRUE(Pull(image, ImageStore::kCriSystem).error.ok());
  LegacyUpgradeParams p;
  p.image = image;
  auto box = cluster_->LegacyUpgrade(Worker(), p);
  clock_->AdvanceBy(timings_.image_pull - milliseconds(1));
  EXPECT_FALSE(box->Pop(milliseconds(0)).has_value());
  clock_->AdvanceBy(milliseconds(1));
  auto acked = box->Pop(milliseconds(0));
  ASSERT_TRUE(acked.has_value());
  EXPECT_TRUE(acked->ok()) << acked->status();
}

TEST_F(ImageModelTest, ContainerdInstancesFollowCtrhelper) {
  EXPECT_EQ(*ContainerdStore(1, 1), ImageStore::kCriSystem);  // talosctl --namespace system
  EXPECT_EQ(*ContainerdStore(1, 2), ImageStore::kCriK8s);
  EXPECT_EQ(*ContainerdStore(0, 1), ImageStore::kSystemInMemory);
  auto cri_ns = ContainerdStore(0, 2);
  EXPECT_EQ(cri_ns.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cri_ns.status().message(), "cannot use CRI namespace with containerd driver");
  auto unknown = ContainerdStore(1, 0);
  EXPECT_EQ(unknown.status().message(), "invalid containerd namespace NS_UNKNOWN");
  EXPECT_EQ(LegacyImagePullStore(0).status().message(), "invalid namespace NS_UNKNOWN");
}

TEST(ImageRefTest, NormalizesLikeParseDockerRef) {
  const std::pair<std::string, std::string> cases[] = {
      {"alpine", "docker.io/library/alpine:latest"},
      {"acme/installer:v1", "docker.io/acme/installer:v1"},
      {"index.docker.io/acme/x:1", "docker.io/acme/x:1"},
      {"localhost:5000/x", "localhost:5000/x:latest"},
      {"ghcr.io/siderolabs/installer:v1.13.0", "ghcr.io/siderolabs/installer:v1.13.0"},
      {"ghcr.io/a/b:v1@sha256:" + std::string(64, 'a'), "ghcr.io/a/b@sha256:" + std::string(64, 'a')},
  };
  for (const auto& [in, out] : cases) {
    auto ref = ParseImageRef(in);
    ASSERT_TRUE(ref.ok()) << in << ": " << ref.status();
    EXPECT_EQ(ref->Normalized(), out) << in;
  }
  for (const char* bad : {"", "UPPER/case", "a@sha256:zz", "a b"}) {
    EXPECT_EQ(ParseImageRef(bad).status().code(), absl::StatusCode::kUnknown) << bad;
  }
}

}  // namespace
}  // namespace tr::sim
