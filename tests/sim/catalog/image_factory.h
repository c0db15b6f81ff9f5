// The simulated Image Factory's catalogue: the schematics it knows, the Talos releases it
// builds, the official extensions it offers per release, and what an installer it builds puts
// on a node (the ExtensionStatuses the node then serves). The HTTP front (image_factory_server.h)
// and the registry catalogue (image_registry.h) read it; tests and the control endpoint change
// it at run time (a new release).
//
// Facts (siderolabs/image-factory): POST /schematics stores any valid schematic, without
// checking its extensions (internal/frontend/http/configuration.go); an installer is built per
// schematic and Talos version, with the schematic's official extensions in the schematic's
// order, each found by repository name among the version's official extensions (else 400
// "official extension ... is not available for Talos version ..."), then the virtual extension
// `schematic` (version = schematic ID, author "Image Factory (<factory URL>)")
// (internal/profile/profile.go, internal/artifacts/schematic.go). The imager unpacks the
// extensions into directories 0, 1, 2, ... and the node names each ExtensionStatus after its
// directory (talos pkg/imager/imager.go, internal/app/machined/pkg/controllers/runtime/
// extension_status.go).
//
// A release marked broken (image-factory v1.3.3 on, `BrokenTalosVersions` in its options:
// cmd/image-factory/cmd/options.go) leaves `/versions` and is listed at `/versions?broken=true`
// (internal/artifacts/versions.go, internal/frontend/http/meta.go); the factory no longer
// builds it ("version … is not available", internal/artifacts/manager.go).
//
// Thread-safety: every method may be called from any thread (one internal mutex, never held
// while calling out).
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/sim/catalog/fleet_spec.h"
#include "tests/sim/catalog/schematic_id.h"

namespace tr::sim {

// One element of GET /version/<v>/extensions/official.
struct OfficialExtension {
  std::string name;  // "siderolabs/iscsi-tools"
  std::string ref;   // "ghcr.io/siderolabs/iscsi-tools:v1.14.0"
  std::string digest;
  std::string author;
  std::string description;
};

// One extension of an installed image, as the node's ExtensionStatus shows it.
struct InstalledExtension {
  std::string id;     // "0", "1", ... (the imager's directory)
  std::string image;  // "0.sqsh"
  std::string name;   // manifest name: "iscsi-tools", "schematic"
  std::string version;
  std::string author;
  std::string description;
};

// Extensions every version offers when the fleet file names none.
inline constexpr std::string_view kDefaultFactoryExtensions[] = {
    "siderolabs/iscsi-tools", "siderolabs/qemu-guest-agent", "siderolabs/nvidia-container-toolkit",
    "siderolabs/util-linux-tools", "siderolabs/intel-ucode"};

class ImageFactory {
 public:
  // `default_versions` serve when `spec.versions` is empty; `known_schematics` exist without
  // being posted (their content unknown: no official extensions).
  ImageFactory(FactorySpec spec, std::vector<std::string> default_versions,
               std::set<std::string> known_schematics);

  // Where the HTTP front listens ("http://127.0.0.1:<port>"); its host:port is the registry host
  // of this factory's installers. Empty while no front is running.
  void set_url(std::string url);
  std::string url() const;
  std::string host() const;

  // Stores a schematic; its ID.
  std::string Register(const Schematic& schematic);
  bool Knows(std::string_view id) const;

  std::vector<std::string> Versions() const;  // sorted oldest first, "v1.14.0"
  bool HasVersion(std::string_view tag) const;
  // Whether the fleet file listed the versions (then factory.talos.dev is held to them too).
  bool VersionsDeclared() const { return versions_declared_; }
  // A new release (the default extensions follow it unless each names its versions).
  void AddVersion(std::string tag);
  // Marks a release broken: no longer listed or built, listed among the broken ones instead.
  void MarkBroken(std::string tag);
  std::vector<std::string> BrokenVersions() const;  // sorted oldest first
  bool IsBroken(std::string_view tag) const;
  // How often the broken list was asked for over HTTP: a test knows a client has read it since
  // a release was marked.
  void CountBrokenRead();
  int broken_reads() const;

  // NotFound for a version the factory does not build.
  absl::StatusOr<std::vector<OfficialExtension>> OfficialExtensions(std::string_view tag) const;

  // The extensions an installer of schematic `id` for Talos `tag` carries, the schematic
  // extension last, its author naming `api_url`. NotFound for an unknown schematic;
  // FailedPrecondition when a requested extension is not published for `tag`.
  absl::StatusOr<std::vector<InstalledExtension>> ImageExtensions(std::string_view id,
                                                                  std::string_view tag,
                                                                  std::string_view api_url) const;

 private:
  bool HasVersionLocked(std::string_view tag) const;
  std::vector<OfficialExtension> OfficialLocked(std::string_view tag) const;

  mutable std::mutex mu_;
  std::set<std::string> versions_;  // ordered by core::Version via Versions()
  std::set<std::string> broken_;    // never also in versions_
  int broken_reads_ = 0;
  bool versions_declared_ = false;
  std::vector<FactoryExtensionSpec> extensions_;
  std::map<std::string, std::optional<Schematic>, std::less<>> schematics_;
  std::string url_;
};

}  // namespace tr::sim
