// An Image Factory schematic (the customization an installer image is built from) and its ID.
//
// Facts (siderolabs/image-factory pkg/schematic/schematic.go): a schematic is decoded strictly
// (an unknown key is an error), then re-marshalled with go-yaml (fields in declaration order,
// empty fields omitted, 4-space indentation, sequences indented under their key); the ID is the
// hex sha256 of that canonical text, so the empty schematic is
// sha256("customization: {}\n") = 376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba
// and two spellings of the same schematic share an ID.
//
// Values and pure functions; thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tr::sim {

struct SchematicMeta {
  int key = 0;  // a META key, 0..255
  std::string value;
};

struct Schematic {
  // Enterprise only: the community factory refuses a schematic that sets it (Validate).
  std::string owner;
  std::string overlay_image;  // "siderolabs/sbc-raspberrypi"
  std::string overlay_name;   // "rpi_generic"
  // overlay.options already in canonical form (the lines under "options:"), or empty.
  std::string overlay_options;
  std::string embedded_machine_configuration;
  std::vector<std::string> extra_kernel_args;
  std::vector<SchematicMeta> meta;
  std::vector<std::string> official_extensions;  // "siderolabs/iscsi-tools"
  std::string bootloader;                        // "dual-boot", "sd-boot", "grub"; "" = none
  std::string secureboot_enroll_keys;
  bool include_well_known_certificates = false;
  unsigned disk_image_sector_size = 0;
};

// Decodes a schematic (YAML or JSON). InvalidArgument for invalid YAML, an unknown key, a value
// of the wrong type or an owner (as the factory answers 400 for each).
absl::StatusOr<Schematic> ParseSchematic(std::string_view yaml);

// The canonical text the ID is computed from.
std::string CanonicalSchematicYaml(const Schematic& schematic);

// The 64-hex schematic ID.
std::string SchematicId(const Schematic& schematic);

}  // namespace tr::sim
