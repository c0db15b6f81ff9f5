// spec.talos.installerStore end to end: a profile asking for the in-memory store (as Omni
// upgrades) has every 1.13+ node pull its installer there and install it from there, in the
// same boot; the default is the CRI containerd's system namespace, as talosctl's.
#include <string>
#include <vector>

#include "tests/e2e/e2e_fixture.h"

namespace tr::e2e {
namespace {

constexpr auto kStoreTestReadyTimeout = 120s;

// The simulator's journal lines of `cluster` after `since` that record what `what` ("pull",
// "install") did on `node`, their details.
std::vector<std::string> StoreStateDetails(const std::vector<JournalLine>& journal,
                                           const std::string& cluster, const std::string& node,
                                           const std::string& what, uint64_t since) {
  std::vector<std::string> details;
  for (const JournalLine& line : journal) {
    if (line.seq > since && !line.call && line.cluster == cluster && line.node == node &&
        line.what == what) {
      details.push_back(line.detail);
    }
  }
  return details;
}

bool AllStoreDetailsMention(const std::vector<std::string>& details, const std::string& text) {
  if (details.empty()) return false;
  for (const std::string& d : details) {
    if (d.find(text) == std::string::npos) return false;
  }
  return true;
}

// Upgrades cluster "mem" (a control plane and a worker) from 1.13.2 to 1.13.9 with
// spec.talos.installerStore `store` (empty: not written), and checks that every pull and install
// of each node used the simulator's store `sim_store` ("inmem", "cri/system":
// tests/sim/catalog/image_registry.cc).
void ExpectPullAndInstallIn(E2eWorld& world, const std::string& store,
                            const std::string& sim_store) {
  E2E_ASSERT_OK(world.StartFleet({MakeCluster("mem", 1, 1, "1.13.2", "1.35.0")}));
  world.PushProfiles({{"mem", AtTalos("1.13.2", {}, "1.35.0")}}, "initial profile");
  E2E_ASSERT_OK(world.StartDaemon());
  E2E_ASSERT_OK(world.WaitForReady("mem", "1.13.2", "", kStoreTestReadyTimeout).status());
  const uint64_t since = LastSeq(world.Journal());

  ProfileDef wanted = AtTalos("1.13.9", {}, "1.35.0");
  wanted.installer_store = store;
  world.PushProfiles({{"mem", wanted}}, "mem: Talos 1.13.9");
  E2E_ASSERT_OK(world.WaitForReady("mem", "1.13.9", "", kStoreTestReadyTimeout).status());
  const auto journal = world.Journal();
  for (const char* node : {"mem-cp-0", "mem-w-0"}) {
    SCOPED_TRACE(node);
    const auto pulls = StoreStateDetails(journal, "mem", node, "pull", since);
    const auto installs = StoreStateDetails(journal, "mem", node, "install", since);
    EXPECT_TRUE(AllStoreDetailsMention(pulls, " into " + sim_store))
        << testing::PrintToString(pulls);
    EXPECT_TRUE(AllStoreDetailsMention(installs, " from " + sim_store))
        << testing::PrintToString(installs);
  }
}

TEST_F(E2eTest, TheInMemoryInstallerStoreIsPulledIntoAndInstalledFrom) {
  ASSERT_NO_FATAL_FAILURE(ExpectPullAndInstallIn(world(), "inmem", "inmem"));
}

TEST_F(E2eTest, TheDefaultInstallerStoreIsTheCriContainerdsSystemNamespace) {
  ASSERT_NO_FATAL_FAILURE(ExpectPullAndInstallIn(world(), "", "cri/system"));
}

}  // namespace
}  // namespace tr::e2e
