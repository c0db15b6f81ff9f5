// The COSI resources a node derives from the extensions of its installed image:
// ExtensionStatuses (runtime namespace, one per extension, id = the imager's directory name,
// spec = the extensions.Layer: image and manifest metadata) and, from Talos 1.14, the singleton
// ImageFactorySchematics/image-factory-schematic when one of them is the `schematic` extension
// (spec schematicId = its version, flavor and apiUrl parsed from its author "Flavor (URL)").
//
// Facts (siderolabs/talos): pkg/machinery/resources/runtime/extension_status.go,
// pkg/machinery/extensions/{config.go,metadata.go}, api/resource/definitions/extensions/
// extensions.proto, internal/app/machined/pkg/controllers/runtime/{extension_status.go,
// image_factory_schematic.go}, pkg/machinery/resources/runtime/image_factory_schematic.go.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "tests/sim/catalog/image_factory.h"

namespace tr::sim {

// One resource as a node serves it: its key fields and its spec, protobuf and YAML.
struct DesiredResource {
  std::string ns, type, id, proto, yaml;
};

std::vector<DesiredResource> ExtensionResources(const std::vector<InstalledExtension>& extensions,
                                                int talos_minor);

}  // namespace tr::sim
