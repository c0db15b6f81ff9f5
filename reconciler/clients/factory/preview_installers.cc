#include "reconciler/clients/factory/preview_installers.h"

#include <set>
#include <string>
#include <utility>

#include "core/schematic.h"
#include "fmt/format.h"

namespace tr::reconciler::factory {

PreviewInstallers::PreviewInstallers(FactoryInstallers& daemon, std::size_t max_requests)
    : daemon_(daemon),
      max_requests_(max_requests),
      ids_("",
           [this](std::string_view origin, std::string_view yaml) -> absl::StatusOr<std::string> {
             if (std::optional<std::string> id = daemon_.ids().Known(origin, yaml)) return *id;
             if (absl::Status s = Spend(); !s.ok()) return s;
             return CreateSchematic(AskingAt(daemon_.options(), origin), yaml);
           }),
      resolver_(
          daemon.options().origin, ids_,
          [this](std::string_view origin,
                 const core::Version& version) -> absl::StatusOr<std::vector<std::string>> {
            if (absl::Status s = Spend(); !s.ok()) return s;
            return OfficialExtensions(AskingAt(daemon_.options(), origin), version);
          },
          daemon.default_named_by()) {}

absl::Status PreviewInstallers::Admit(const std::vector<core::ClusterProfile>& profiles) {
  std::set<std::pair<std::string, std::string>> schematics;  // (origin, YAML) not known
  std::set<std::pair<std::string, std::string>> lists;       // (origin, Talos tag)
  const auto count = [&](const std::string& origin, const core::ClusterProfile& profile,
                         const core::Schematic& schematic) {
    const std::string yaml = core::SchematicYaml(schematic);
    if (!schematics.contains({origin, yaml}) && !daemon_.ids().Known(origin, yaml)) {
      schematics.emplace(origin, yaml);
    }
    if (!schematic.official_extensions.empty()) {
      lists.emplace(origin, profile.talos_version.Tag());
    }
  };
  for (const core::ClusterProfile& profile : profiles) {
    if (!profile.talos_factory) continue;
    const std::string origin = profile.talos_factory->factory.empty()
                                   ? daemon_.options().origin
                                   : profile.talos_factory->factory;
    count(origin, profile, profile.talos_factory->schematic);
    for (const core::NodeSpec& node : profile.nodes) {
      if (node.schematic) count(origin, profile, *node.schematic);
    }
  }
  const std::size_t needed = schematics.size() + lists.size();
  if (needed <= max_requests_) return absl::OkStatus();
  return absl::ResourceExhaustedError(fmt::format(
      "the change needs {} Image Factory requests ({} new schematics, {} extension lists); a "
      "pull request's plan makes at most {}: split it, or let the daemon learn the schematics "
      "of a smaller change first",
      needed, schematics.size(), lists.size(), max_requests_));
}

absl::Status PreviewInstallers::Spend() {
  if (requests_ >= max_requests_) {
    return absl::ResourceExhaustedError(fmt::format(
        "a pull request's plan makes at most {} Image Factory requests", max_requests_));
  }
  ++requests_;
  return absl::OkStatus();
}

}  // namespace tr::reconciler::factory
