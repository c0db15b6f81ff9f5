// The installer resolution of one pull request's preview, bounded and leaving nothing behind.
// A schematic ID the daemon already knows is used as it is; any other is asked of the factory and
// kept for this preview only (never in the daemon's state directory or memory), and the factory
// requests one preview may make (schematic IDs and extension lists) are counted against a budget
// before any is made: a pull request that names 9,000 schematics is refused whole, at no cost to
// the factory, rather than costing 9,000 requests and 9,000 files that never expire.
//
// Thread-compatible: one preview at a time uses one instance.
#pragma once

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "core/profile.h"
#include "reconciler/clients/factory/factory_installers.h"
#include "reconciler/clients/factory/installer_resolution.h"
#include "reconciler/clients/factory/schematic_ids.h"

namespace tr::reconciler::factory {

// The Image Factory requests one pull request's preview may make.
inline constexpr std::size_t kPreviewFactoryRequests = 64;

class PreviewInstallers {
 public:
  PreviewInstallers(FactoryInstallers& daemon, std::size_t max_requests);
  PreviewInstallers(const PreviewInstallers&) = delete;
  PreviewInstallers& operator=(const PreviewInstallers&) = delete;

  // OK when resolving `profiles` needs at most max_requests factory requests: the distinct
  // schematics the daemon does not know, and one extension list for each (factory, Talos
  // version) that names extensions. ResourceExhausted naming the budget otherwise.
  absl::Status Admit(const std::vector<core::ClusterProfile>& profiles);

  InstallerResolver& resolver() { return resolver_; }
  std::size_t requests() const { return requests_; }

 private:
  absl::Status Spend();

  FactoryInstallers& daemon_;
  const std::size_t max_requests_;
  std::size_t requests_ = 0;
  SchematicIds ids_;
  InstallerResolver resolver_;  // last: it refers to ids_
};

}  // namespace tr::reconciler::factory
