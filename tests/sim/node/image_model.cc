// Images on a simulated node: pulls into a containerd store from the registry catalogue, the
// legacy Upgrade's pull-and-validate, and the 1.13+ LifecycleService/Upgrade that installs only
// what is already in the requested store (see image_registry.h for the upstream facts).
#include "fmt/format.h"
#include "tests/sim/catalog/image_verification.h"
#include "tests/sim/catalog/installer_config_check.h"
#include "tests/sim/node/sim_cluster.h"

namespace tr::sim {
namespace {

absl::Status NotFound(const std::string& normalized) {
  return absl::NotFoundError(
      fmt::format("failed to pull image \"{0}\": failed to resolve reference \"{0}\": {0}: not "
                  "found",
                  normalized));
}

}  // namespace

absl::StatusOr<ImageRef> SimCluster::ResolveImageLocked(SimNode& node, const std::string& image) {
  auto ref = ParseImageRef(image);
  if (!ref.ok()) return ref.status();
  if (FireFaultLocked(node, FaultKind::kBadInstallerImage, image) ||
      FireFaultLocked(node, FaultKind::kImagePullFailure, image)) {
    return NotFound(ref->Normalized());
  }
  if (!registry_->Exists(*ref)) return NotFound(ref->Normalized());
  return ref;
}

bool SimCluster::FireFaultLocked(SimNode& node, FaultKind kind, const std::string& image) {
  for (auto& f : node.faults) {
    if (f.kind != kind || f.count == 0) continue;
    if (!f.image.empty() && image.find(f.image) == std::string::npos) continue;
    if (f.count > 0) --f.count;
    JournalStateLocked(node, "fault",
                       image.empty() ? fmt::format("{} fired", FaultKindName(kind))
                                     : fmt::format("{} fired for {}", FaultKindName(kind), image));
    return true;
  }
  return false;
}

absl::Status SimCluster::VerifyPullLocked(const SimNode& node, const std::string& image,
                                          bool legacy_upgrade) const {
  auto version = core::ParseTalosVersion(node.tag);
  if (!version.ok() || version->Minor() < core::MinorVersion{1, 13}) return absl::OkStatus();
  auto ref = ParseImageRef(image);
  if (!ref.ok()) return absl::OkStatus();  // the pull reports it
  absl::Status denied = VerifyImage(ReadImageVerificationRules(node.machine_config), ref->Name());
  const bool retry_loop = legacy_upgrade || version->Minor() < core::MinorVersion{1, 14};
  if (denied.ok() || !retry_loop) return denied;
  return absl::UnknownError(RetriedErrorText(std::string(denied.message())));
}

bool SimCluster::HasImageLocked(const SimNode& node, ImageStore store,
                                const std::string& name) const {
  auto it = node.image_store.find(store);
  return it != node.image_store.end() && it->second.contains(name);
}

absl::StatusOr<std::string> SimCluster::ValidateInstallerLocked(SimNode& node,
                                                                const std::string& image) {
  if (!HasImageLocked(node, ImageStore::kSystemInMemory, image)) {
    if (auto st = VerifyPullLocked(node, image, /*legacy_upgrade=*/true); !st.ok()) return st;
  }
  auto ref = ResolveImageLocked(node, image);
  if (!ref.ok()) return ref.status();
  for (const auto& name : StoredNames(*ref)) {
    node.image_store[ImageStore::kSystemInMemory].insert(name);
  }
  node.image_store[ImageStore::kSystemInMemory].insert(image);
  const std::string tag = RegistryCatalog::InstallerTag(*ref);
  if (tag.empty()) {
    return absl::UnknownError("installer help returned non-zero exit. assuming invalid installer");
  }
  return tag;
}

std::shared_ptr<Mailbox<ProgressItem>> SimCluster::PullImage(SimNode& node, std::string image,
                                                             ImageStore store) {
  std::lock_guard lock(mu_);
  auto box = std::make_shared<Mailbox<ProgressItem>>();
  JournalStateLocked(node, "pull", fmt::format("{} into {}", image, ImageStoreName(store)));
  auto parsed = ParseImageRef(image);
  if (!parsed.ok()) {
    box->Push(ProgressItem::Error(parsed.status()));
    box->Close();
    return box;
  }
  // Already pulled and unpacked: answered at once, without progress (WithSkipIfAlreadyPulled).
  const bool present = HasImageLocked(node, store, parsed->Normalized());
  const uint64_t generation = node.generation;
  SimNode* n = &node;
  const std::string layer = ImageDigest(*parsed);
  if (!present) box->Push(ProgressItem::Layer(layer, 0, 0, 52'428'800));
  const auto delay = present ? Scheduler::Duration{} : Scaled(timings_.image_pull);
  scheduler_->After(delay, [this, n, generation, box, image, layer, store, present] {
    std::lock_guard inner(mu_);
    if (stopping_ || n->generation != generation) {
      box->Push(
          ProgressItem::Error(absl::UnavailableError("connection closed: node is rebooting")));
    } else if (auto denied = present ? absl::OkStatus()
                                     : VerifyPullLocked(*n, image, /*legacy_upgrade=*/false);
               !denied.ok()) {
      box->Push(ProgressItem::Error(denied));
    } else if (auto ref = ResolveImageLocked(*n, image); !ref.ok()) {
      const absl::Status& st = ref.status();
      box->Push(ProgressItem::Error(
          absl::IsNotFound(st)
              ? absl::NotFoundError(
                    fmt::format("error pulling image: {}", std::string(st.message())))
              : st));
    } else {
      for (const auto& name : StoredNames(*ref)) n->image_store[store].insert(name);
      if (!present) {
        box->Push(ProgressItem::Layer(layer, 1, 52'428'800, 52'428'800));
        box->Push(ProgressItem::Layer(layer, 3, 52'428'800, 52'428'800));
      }
      box->Push(ProgressItem::Name(PinnedName(*ref)));
      // The answer is on its way; then the machine loses power and comes back.
      if (FireFaultLocked(*n, FaultKind::kRebootAfterPull, image)) GoDownLocked(*n, false);
    }
    box->Close();
  });
  return box;
}

std::shared_ptr<Mailbox<ProgressItem>> SimCluster::InstallerExitedLocked(
    SimNode& node, std::shared_ptr<Mailbox<ProgressItem>> box, const std::string& why,
    const std::string& output) {
  node.installing = false;
  JournalStateLocked(node, "install", "failed: " + why);
  box->Push(ProgressItem::Message(output));
  box->Push(ProgressItem::Exit(1));
  box->Close();
  return box;
}

absl::StatusOr<std::shared_ptr<Mailbox<ProgressItem>>> SimCluster::LifecycleUpgrade(
    SimNode& node, std::string image, ImageStore store) {
  std::lock_guard lock(mu_);
  if (node.installing) {
    return absl::FailedPreconditionError("another installation/upgrade is already in progress");
  }
  if (image.empty()) return absl::InvalidArgumentError("installer image name is required");
  // containerd's GetImage looks the name up exactly as requested: a short name that the pull
  // stored normalized ("docker.io/...") is not found.
  if (!HasImageLocked(node, store, image)) {
    JournalStateLocked(node, "install",
                       fmt::format("failed: {} not in {}", image, ImageStoreName(store)));
    return absl::InternalError(fmt::format(
        "upgrade failed: installer image \"{0}\" not found in containerd store: image \"{0}\": "
        "not found",
        image));
  }
  node.installing = true;
  JournalStateLocked(node, "install", fmt::format("start {} from {}", image, ImageStoreName(store)));
  auto box = std::make_shared<Mailbox<ProgressItem>>();
  box->Push(ProgressItem::Message(fmt::format("running installer {}", image)));
  auto ref = ParseImageRef(image);
  const std::string tag = ref.ok() ? RegistryCatalog::InstallerTag(*ref) : std::string();
  if (tag.empty()) {
    return InstallerExitedLocked(node, box, "not an installer image",
                                 fmt::format("error: {} is not a Talos installer", image));
  }
  // The installer loads the node's configuration first: an older one refuses documents its
  // version does not know (installer_config_check.h).
  if (std::string refusal =
          InstallerConfigLoadError(node.machine_config, core::ParseTalosVersion(tag)->Minor());
      !refusal.empty()) {
    return InstallerExitedLocked(node, box, fmt::format("{} refused the configuration", tag),
                                 refusal);
  }
  const char slot = node.default_slot() == 0 ? 'B' : 'A';
  box->Push(ProgressItem::Message(fmt::format("installing {} to boot slot {}", tag, slot)));
  const uint64_t generation = node.generation;
  SimNode* n = &node;
  scheduler_->After(Scaled(timings_.install), [this, n, generation, box, tag, image] {
    std::lock_guard inner(mu_);
    if (stopping_ || n->generation != generation) {
      box->Push(
          ProgressItem::Error(absl::UnavailableError("connection closed: node is rebooting")));
      box->Close();
      return;
    }
    n->installing = false;
    InstallIntoSlotLocked(*n, tag, image);
    box->Push(ProgressItem::Message("upgrade complete; reboot to activate the new version"));
    box->Push(ProgressItem::Exit(0));
    box->Close();
    NotifyLocked();
  });
  return box;
}

}  // namespace tr::sim
