// An Image Factory schematic as a profile declares it (`spec.talos.schematic`,
// `spec.nodes[].schematic`; docs/profiles.md), its canonical YAML, and the installer image
// repository the factory serves for it.
//
// The factory (siderolabs/image-factory) answers `POST /schematics` with the schematic's ID,
// the sha256 of its own canonical serialization. SchematicYaml writes that serialization's
// layout (field names, order, omitted empty sections, 4-space indentation), so for the usual
// values sha256(SchematicYaml(s)) is already the ID; the ID the factory answers is the one
// that counts.
//
// Plain values and pure functions; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tr::core {

// One initial META value of the image (`customization.meta[]`).
struct SchematicMeta {
  int key = 0;  // 0..255 (the factory's uint8)
  std::string value{};

  bool operator==(const SchematicMeta&) const = default;
};

// `overlay`: the board overlay of single-board computers.
struct SchematicOverlay {
  std::string image{};  // e.g. "siderolabs/sbc-raspberrypi"
  std::string name{};   // e.g. "rpi_generic"
  // `options` in canonical block YAML (keys sorted, 4-space indentation, lines relative to
  // the `options:` key); empty when none were written.
  std::string options_yaml{};

  bool operator==(const SchematicOverlay&) const = default;
};

struct Schematic {
  // customization.systemExtensions.officialExtensions: "vendor/name", sorted, unique (the
  // order of extensions means nothing, so two spellings of one set compare equal).
  std::vector<std::string> official_extensions{};
  std::vector<std::string> extra_kernel_args{};  // customization.extraKernelArgs, as written
  std::vector<SchematicMeta> meta{};           // customization.meta, sorted by key, unique
  std::optional<SchematicOverlay> overlay{};
  // Where it was written: "" inline in the profile, else the `schematics/<name>.yaml` path.
  // Not part of the schematic itself: SchematicYaml and SameSchematic ignore it.
  std::string file{};

  bool operator==(const Schematic&) const = default;
};

// The ID of the empty schematic: a vanilla image, with no extension.
inline constexpr std::string_view kEmptySchematicId =
    "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";

// True when `a` and `b` describe the same image whatever file they were written in.
bool SameSchematic(const Schematic& a, const Schematic& b);

// The canonical YAML to POST to the factory's /schematics: `overlay` (when set), then
// `customization` with extraKernelArgs, meta and systemExtensions, each left out when empty.
// The empty schematic is "customization: {}\n" (ID 376567988ad3...).
std::string SchematicYaml(const Schematic& schematic);

// `spec.talos` of a profile that names a schematic instead of an installer repository.
struct FactoryInstaller {
  // http(s)://host[:port]; empty: reconciler.yaml's imageFactory, else the daemon's
  // --image-factory flag.
  std::string factory{};
  std::string platform = "metal";
  bool secureboot = false;
  Schematic schematic{};

  bool operator==(const FactoryInstaller&) const = default;
};

// The installer repository the factory serves for a schematic ID:
// "<host[:port]>/<platform>-installer[-secureboot]/<schematic_id>", the scheme of
// `factory_url` (http:// or https://, no path) dropped. No tag: it is v<Talos version>.
std::string FactoryInstallerRepository(std::string_view factory_url, std::string_view platform,
                                       bool secureboot, std::string_view schematic_id);

}  // namespace tr::core
