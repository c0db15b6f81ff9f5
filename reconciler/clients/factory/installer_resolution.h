// A profile that names an Image Factory schematic (spec.talos.schematic) made plannable: the
// factory gives the schematic's ID, and with it the installer repository
// (`<factory host>/<platform>-installer[-secureboot]/<id>`) fills `talos_image`. The factory is
// the profile's (or reconciler.yaml's imageFactory), else --image-factory (`run`'s or
// `plan`'s); a pull request's own factory is never dialled (PreviewPlan first gives a proposed
// profile the factory the watched branch names).
// Before any node is touched, every extension the schematic names must exist at the factory for
// the desired Talos version.
//
// Thread-safe when the callables are.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "core/profile.h"
#include "core/version.h"
#include "reconciler/clients/factory/schematic_ids.h"

namespace tr::reconciler::factory {

class InstallerResolver {
 public:
  // The official extensions a factory has for a Talos version (OfficialExtensions).
  using ExtensionLister = std::function<absl::StatusOr<std::vector<std::string>>(
      std::string_view origin, const core::Version& version)>;

  // `default_factory`: --image-factory, empty when not given. `default_named_by` ends the
  // error of a schematic no factory is named for: how the command running it names one.
  InstallerResolver(std::string default_factory, SchematicIds& ids, ExtensionLister extensions,
                    std::string default_named_by = "with the daemon's --image-factory");

  // `profile` unchanged when it names no schematic; else with talos_image and
  // talos_schematic_id filled, and those of each node with a schematic of its own (same
  // factory, same checks; an error of one names the node). Errors, each naming the factory's URL
  // when one was asked: FailedPrecondition (no factory named anywhere; an extension the factory
  // does not have for the desired version), or the factory's own error (Unavailable,
  // DeadlineExceeded, ...). `check_extensions` false skips the extension check (a node already in
  // flight is followed to its end whether or not the factory answers).
  absl::StatusOr<core::ClusterProfile> Resolve(const core::ClusterProfile& profile,
                                               bool check_extensions = true);

 private:
  absl::Status CheckExtensions(std::string_view origin, const core::Version& version,
                               const std::vector<std::string>& wanted);
  // The ID the factory at `origin` gives `schematic`, its extensions checked first.
  absl::StatusOr<std::string> SchematicId(std::string_view origin, const core::Version& version,
                                          const core::Schematic& schematic, bool check_extensions);

  const std::string default_factory_;
  const std::string default_named_by_;
  SchematicIds& ids_;
  const ExtensionLister extensions_;
  // The last list of each (origin, Talos tag): asked again only when it lacks a name, so a
  // reconcile of a cluster whose schematic is known costs the factory nothing.
  Mutex mu_;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> known_extensions_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler::factory
