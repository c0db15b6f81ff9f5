#include "reconciler/clients/factory/factory_installers.h"

#include <utility>

namespace tr::reconciler::factory {

FactoryInstallers::FactoryInstallers(const ImageFactoryOptions& options,
                                     std::filesystem::path ids_dir, std::string default_named_by)
    : options_(options),
      default_named_by_(default_named_by),
      ids_(std::move(ids_dir),
           [options](std::string_view origin, std::string_view yaml) {
             return CreateSchematic(AskingAt(options, origin), yaml);
           }),
      resolver_(
          options.origin, ids_,
          [options](std::string_view origin, const core::Version& version) {
            return OfficialExtensions(AskingAt(options, origin), version);
          },
          std::move(default_named_by)) {}

}  // namespace tr::reconciler::factory
