// Container images as a Talos node's containerd sees them: references normalized the way
// Talos' image.Pull stores them, the containerd instances a request can name, and the registry
// catalogue that decides which images exist (a pull of anything else is NotFound, as a real
// registry answers).
//
// Facts (siderolabs/talos):
//  - internal/pkg/containers/image/pull.go + aliases.go: a pull stores the image under its
//    normalized name ("alpine" -> "docker.io/library/alpine:latest"), its digest and
//    "<name>@<digest>"; an image already present is not pulled again.
//  - internal/app/internal/ctrhelper/ctrhelper.go: driver CONTAINERD = the system containerd
//    (its store lives in memory and is empty after every boot), driver CRI = the CRI containerd
//    (on EPHEMERAL: survives reboots); namespace NS_SYSTEM = "system", NS_CRI = "k8s.io";
//    NS_UNKNOWN and CONTAINERD + NS_CRI are InvalidArgument.
//  - internal/app/lifecycle/container.go: the install looks the image up by the name as
//    requested, without normalizing it.
//
// Values and pure functions; thread-compatible.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/sim/catalog/image_factory.h"

namespace tr::sim {

// One image store of a node: a containerd instance and namespace.
enum class ImageStore {
  kSystemInMemory,  // driver CONTAINERD, namespace system: emptied at every boot
  kCriSystem,       // driver CRI, namespace system (talosctl --namespace system): persistent
  kCriK8s,          // driver CRI, namespace k8s.io (Kubernetes workloads): persistent
};

// "inmem", "cri/system", "cri/k8s.io" (journal text).
std::string_view ImageStoreName(ImageStore store);

// common.ContainerdInstance{driver, namespace} (numbers as in common.proto) to a store, with
// ctrhelper's InvalidArgument errors.
absl::StatusOr<ImageStore> ContainerdStore(int driver, int containerd_namespace);

// Legacy MachineService/ImagePull: always the CRI containerd, in the requested namespace;
// NS_UNKNOWN is InvalidArgument "invalid namespace NS_UNKNOWN" (v1alpha1_images.go).
absl::StatusOr<ImageStore> LegacyImagePullStore(int containerd_namespace);

// A parsed image reference, normalized as distribution/reference.ParseDockerRef does.
struct ImageRef {
  std::string domain;  // "docker.io", "ghcr.io", "factory.talos.dev", "localhost:5000"
  std::string path;    // "library/alpine", "siderolabs/installer"
  std::string tag;     // "latest" when neither tag nor digest was given; empty with a digest
  std::string digest;  // "sha256:<64 hex>" or empty

  std::string Name() const { return domain + "/" + path; }
  // "<name>:<tag>" or "<name>@<digest>" (a digest wins over a tag, as ParseDockerRef does).
  std::string Normalized() const;
};

// Unknown "failed to parse image reference ..." for what containerd would not parse (empty,
// uppercase repository, bad characters, a malformed digest).
absl::StatusOr<ImageRef> ParseImageRef(std::string_view reference);

// The registry's digest of an image (deterministic: the same image has the same digest on every
// node): "sha256:" + 64 hex digits.
std::string ImageDigest(const ImageRef& ref);

// The names a pull stores the image under (pull.go manageAliases): the normalized reference,
// the digest and "<name>@<digest>".
std::vector<std::string> StoredNames(const ImageRef& ref);

// What ImageService/Pull answers as the final name: the reference pinned to its digest.
std::string PinnedName(const ImageRef& ref);

// Which images the simulated registries hold. Built in: the vanilla installer
// ghcr.io/siderolabs/installer:v<Talos> up to 1.13; Image Factory installers
// factory.talos.dev/[<platform>-]installer[-secureboot]/<schematic>:v<Talos> for a known
// schematic (the vanilla one, every node's schematic, the fleet file's `registry.schematics`);
// registry.k8s.io/kube-{apiserver,controller-manager,scheduler,proxy}:v<Kubernetes> and
// ghcr.io/siderolabs/kubelet:v<Kubernetes>[-fat|-slim]; plus the fleet file's
// `registry.images`. A digest reference exists when its repository is known.
//
// The simulated Image Factory (`factory`, optional) serves installers under its own host too
// (`127.0.0.1:<port>/<platform>-installer/<schematic>:v<Talos>`): for a schematic it knows, a
// version it lists and whose official extensions it publishes. factory.talos.dev accepts every
// release tag unless the fleet file lists the factory's versions.
class RegistryCatalog {
 public:
  RegistryCatalog() = default;
  RegistryCatalog(std::vector<std::string> images, std::set<std::string> schematics,
                  std::shared_ptr<const ImageFactory> factory = nullptr);

  bool Exists(const ImageRef& ref) const;
  // An Image Factory installer: its schematic and the factory's URL.
  struct FactoryImage {
    std::string schematic;
    std::string api_url;  // "https://factory.talos.dev", "http://127.0.0.1:<port>"
  };
  std::optional<FactoryImage> FactoryInstaller(const ImageRef& ref) const;
  // The system extensions a node installed from `image` runs on Talos `tag`: a factory image's
  // official extensions and its `schematic` extension; none for any other installer.
  std::vector<InstalledExtension> InstalledExtensions(const std::string& image,
                                                      const std::string& tag) const;
  // Whether `ref` names a Talos installer (an Image Factory installer, or a repository whose
  // last component contains "installer") with a Talos version tag: that tag ("v1.13.2"), else "".
  static std::string InstallerTag(const ImageRef& ref);

 private:
  bool Listed(const ImageRef& ref) const;
  bool KnownRepository(const ImageRef& ref) const;
  bool FactoryBuilds(const ImageRef& ref, const FactoryImage& image) const;

  std::set<std::string> images_;  // normalized
  std::set<std::string> schematics_;
  std::shared_ptr<const ImageFactory> factory_;
};

// The installer a node was installed from, as its machine configuration names it: the Image
// Factory's `<platform>-installer` of its schematic, or with none the vanilla installer (up to
// 1.13 ghcr.io/siderolabs/installer, from 1.14 the factory's metal-installer of the empty
// schematic: talos pkg/images/images.go).
std::string InitialInstallerImage(const std::string& platform, const std::string& schematic,
                                  const std::string& tag);

// The well-known empty ("vanilla") Image Factory schematic.
inline constexpr std::string_view kVanillaSchematic =
    "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba";

}  // namespace tr::sim
