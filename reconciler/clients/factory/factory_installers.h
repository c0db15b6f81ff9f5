// The installer resolution of one process over HTTP: its schematic IDs and its resolver, every
// factory asked with the same options (--image-factory-ca-file, --image-factory-timeout). `run`
// keeps the IDs in its state directory; `plan`, which runs once, in memory.
//
// Thread-safe.
#pragma once

#include <filesystem>
#include <string>

#include "reconciler/clients/factory/image_factory.h"
#include "reconciler/clients/factory/installer_resolution.h"
#include "reconciler/clients/factory/schematic_ids.h"

namespace tr::reconciler::factory {

class FactoryInstallers {
 public:
  // `options.origin`: the factory of profiles that name none (empty: none). `ids_dir` and
  // `default_named_by` as SchematicIds' `dir` and InstallerResolver's.
  FactoryInstallers(const ImageFactoryOptions& options, std::filesystem::path ids_dir,
                    std::string default_named_by);
  FactoryInstallers(const FactoryInstallers&) = delete;
  FactoryInstallers& operator=(const FactoryInstallers&) = delete;

  InstallerResolver& resolver() { return resolver_; }
  SchematicIds& ids() { return ids_; }
  const ImageFactoryOptions& options() const { return options_; }
  const std::string& default_named_by() const { return default_named_by_; }

 private:
  const ImageFactoryOptions options_;
  const std::string default_named_by_;
  SchematicIds ids_;
  InstallerResolver resolver_;  // last: it refers to ids_
};

}  // namespace tr::reconciler::factory
