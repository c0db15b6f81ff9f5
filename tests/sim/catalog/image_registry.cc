#include "tests/sim/catalog/image_registry.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cctype>

#include "core/text.h"
#include "core/version.h"
#include "fmt/format.h"

namespace tr::sim {
namespace {

constexpr int kDriverContainerd = 0;
constexpr int kDriverCri = 1;
constexpr int kNsUnknown = 0;
constexpr int kNsSystem = 1;
constexpr int kNsCri = 2;

std::string NamespaceName(int ns) {
  switch (ns) {
    case kNsUnknown:
      return "NS_UNKNOWN";
    case kNsSystem:
      return "NS_SYSTEM";
    case kNsCri:
      return "NS_CRI";
    default:
      return std::to_string(ns);
  }
}

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsHex(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// A path component: [a-z0-9]+ joined by '.', '_', '__' or dashes (distribution's grammar).
bool IsPathComponent(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return s.find("..") == std::string_view::npos && s.find("___") == std::string_view::npos;
}

bool IsTag(std::string_view s) {
  if (s.empty() || s.size() > 128 || s.front() == '.' || s.front() == '-') return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

absl::Status BadReference(std::string_view reference, std::string_view why) {
  return absl::UnknownError(
      fmt::format("failed to parse image reference \"{}\": {}", reference, why));
}

bool ValidTalosTag(const std::string& tag) {
  return tag.starts_with("v") && core::ParseTalosVersion(tag).ok();
}

bool ValidKubernetesTag(std::string tag, bool allow_flavour) {
  if (allow_flavour) {
    for (const char* suffix : {"-fat", "-slim"}) {
      if (tag.ends_with(suffix)) tag.resize(tag.size() - std::string_view(suffix).size());
    }
  }
  return tag.starts_with("v") && core::ParseKubernetesVersion(tag).ok();
}

// "<kind>/<64-hex schematic>": the Image Factory's repository layout, on any host.
bool IsFactoryPath(std::string_view path) {
  const size_t slash = path.find('/');
  if (slash == std::string_view::npos) return false;
  const std::string_view id = path.substr(slash + 1);
  return id.size() == 64 && IsHex(id);
}

}  // namespace

std::string_view ImageStoreName(ImageStore store) {
  switch (store) {
    case ImageStore::kSystemInMemory:
      return "inmem";
    case ImageStore::kCriSystem:
      return "cri/system";
    case ImageStore::kCriK8s:
      return "cri/k8s.io";
  }
  return "unknown";
}

absl::StatusOr<ImageStore> ContainerdStore(int driver, int containerd_namespace) {
  if (driver != kDriverContainerd && driver != kDriverCri) {
    return absl::InvalidArgumentError(fmt::format("invalid containerd driver {}", driver));
  }
  if (containerd_namespace != kNsSystem && containerd_namespace != kNsCri) {
    return absl::InvalidArgumentError(
        fmt::format("invalid containerd namespace {}", NamespaceName(containerd_namespace)));
  }
  if (driver == kDriverContainerd) {
    if (containerd_namespace == kNsCri) {
      return absl::InvalidArgumentError("cannot use CRI namespace with containerd driver");
    }
    return ImageStore::kSystemInMemory;
  }
  return containerd_namespace == kNsSystem ? ImageStore::kCriSystem : ImageStore::kCriK8s;
}

absl::StatusOr<ImageStore> LegacyImagePullStore(int containerd_namespace) {
  if (containerd_namespace == kNsSystem) return ImageStore::kCriSystem;
  if (containerd_namespace == kNsCri) return ImageStore::kCriK8s;
  return absl::InvalidArgumentError(
      fmt::format("invalid namespace {}", NamespaceName(containerd_namespace)));
}

std::string ImageRef::Normalized() const {
  return digest.empty() ? fmt::format("{}:{}", Name(), tag) : fmt::format("{}@{}", Name(), digest);
}

absl::StatusOr<ImageRef> ParseImageRef(std::string_view reference) {
  ImageRef ref;
  std::string_view rest = reference;
  if (const size_t at = rest.find('@'); at != std::string_view::npos) {
    const std::string_view digest = rest.substr(at + 1);
    if (!digest.starts_with("sha256:") || digest.size() != 71 || !IsHex(digest.substr(7))) {
      return BadReference(reference, "invalid reference format");
    }
    ref.digest = std::string(digest);
    rest = rest.substr(0, at);
  }
  const size_t slash = rest.rfind('/');
  if (const size_t colon = rest.rfind(':');
      colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    if (!IsTag(rest.substr(colon + 1))) return BadReference(reference, "invalid reference format");
    if (ref.digest.empty()) ref.tag = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
  }
  std::vector<std::string_view> parts = core::Split(rest, '/');
  if (parts.size() > 1 && (parts[0].find_first_of(".:") != std::string_view::npos ||
                           parts[0] == "localhost")) {
    ref.domain = parts[0] == "index.docker.io" ? "docker.io" : std::string(parts[0]);
    parts.erase(parts.begin());
  } else {
    ref.domain = "docker.io";
    if (parts.size() == 1) ref.path = "library/";
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!IsPathComponent(parts[i])) {
      const bool upper = std::any_of(parts[i].begin(), parts[i].end(),
                                     [](char c) { return c >= 'A' && c <= 'Z'; });
      return BadReference(reference, upper ? "invalid reference format: repository name must "
                                             "be lowercase"
                                           : "invalid reference format");
    }
    ref.path += (i == 0 ? "" : "/") + std::string(parts[i]);
  }
  if (ref.tag.empty() && ref.digest.empty()) ref.tag = "latest";
  return ref;
}

std::string ImageDigest(const ImageRef& ref) {
  if (!ref.digest.empty()) return ref.digest;
  const std::string name = ref.Normalized();
  unsigned char hash[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(name.data()), name.size(), hash);
  std::string hex;
  for (unsigned char b : hash) hex += fmt::format("{:02x}", b);
  return "sha256:" + hex;
}

std::vector<std::string> StoredNames(const ImageRef& ref) {
  const std::string digest = ImageDigest(ref);
  std::vector<std::string> names = {digest, ref.Name() + "@" + digest};
  if (ref.digest.empty()) names.push_back(ref.Normalized());
  return names;
}

std::string PinnedName(const ImageRef& ref) { return ref.Name() + "@" + ImageDigest(ref); }

RegistryCatalog::RegistryCatalog(std::vector<std::string> images,
                                 std::set<std::string> schematics,
                                 std::shared_ptr<const ImageFactory> factory)
    : schematics_(std::move(schematics)), factory_(std::move(factory)) {
  for (const auto& image : images) {
    auto ref = ParseImageRef(image);
    if (ref.ok()) images_.insert(ref->Normalized());
  }
}

std::string RegistryCatalog::InstallerTag(const ImageRef& ref) {
  // Image Factory: factory.talos.dev/<kind>/<schematic>; elsewhere (the vanilla and custom
  // installers) the repository's last component names it: ".../installer".
  std::string kind = ref.path.substr(ref.path.rfind('/') + 1);
  if (ref.domain == "factory.talos.dev" || IsFactoryPath(ref.path)) {
    kind = ref.path.substr(0, ref.path.find('/'));
  }
  const bool installer = kind.find("installer") != std::string::npos;
  return installer && ValidTalosTag(ref.tag) ? ref.tag : std::string();
}

bool RegistryCatalog::Listed(const ImageRef& ref) const {
  return images_.contains(ref.Normalized());
}

bool RegistryCatalog::KnownRepository(const ImageRef& ref) const {
  const std::string name = ref.Name();
  for (const auto& image : images_) {
    if (image.starts_with(name) && (image[name.size()] == ':' || image[name.size()] == '@')) {
      return true;
    }
  }
  if (name == "ghcr.io/siderolabs/installer" || name == "ghcr.io/siderolabs/kubelet") return true;
  if (ref.domain == "registry.k8s.io") return true;
  if (auto factory = FactoryInstaller(ref)) {
    return schematics_.contains(factory->schematic) ||
           (factory_ && factory_->Knows(factory->schematic));
  }
  return false;
}

std::optional<RegistryCatalog::FactoryImage> RegistryCatalog::FactoryInstaller(
    const ImageRef& ref) const {
  const bool sim_host = factory_ && !factory_->host().empty() && ref.domain == factory_->host();
  if (ref.domain != "factory.talos.dev" && !sim_host) return std::nullopt;
  const size_t slash = ref.path.find('/');
  if (slash == std::string::npos || ref.path.find('/', slash + 1) != std::string::npos) {
    return std::nullopt;
  }
  return FactoryImage{ref.path.substr(slash + 1),
                      sim_host ? factory_->url() : std::string("https://factory.talos.dev")};
}

// An installer the factory builds: a release it lists (factory.talos.dev: any, unless the
// fleet file lists them) and has not marked broken, whose official extensions include every one the schematic names.
bool RegistryCatalog::FactoryBuilds(const ImageRef& ref, const FactoryImage& image) const {
  if (!factory_) return true;
  const bool sim_host = ref.domain != "factory.talos.dev";
  if ((sim_host || factory_->VersionsDeclared()) && !factory_->HasVersion(ref.tag)) return false;
  if (factory_->IsBroken(ref.tag)) return false;  // factory.talos.dev too
  auto extensions = factory_->ImageExtensions(image.schematic, ref.tag, image.api_url);
  return extensions.ok() || absl::IsNotFound(extensions.status());
}

std::vector<InstalledExtension> RegistryCatalog::InstalledExtensions(const std::string& image,
                                                                     const std::string& tag) const {
  auto ref = ParseImageRef(image);
  if (!ref.ok()) return {};
  auto factory = FactoryInstaller(*ref);
  if (!factory) return {};
  if (factory_) {
    auto extensions = factory_->ImageExtensions(factory->schematic, tag, factory->api_url);
    if (extensions.ok()) return *extensions;
  }
  // A schematic whose content the simulation does not know: the schematic extension alone.
  return {{.id = "0",
           .image = "0.sqsh",
           .name = "schematic",
           .version = factory->schematic,
           .author = fmt::format("Image Factory ({})", factory->api_url),
           .description = "Virtual extension which specifies the schematic of the image built "
                          "with schematic."}};
}

std::string InitialInstallerImage(const std::string& platform, const std::string& schematic,
                                  const std::string& tag) {
  auto version = core::ParseTalosVersion(tag);
  const bool factory_default = version.ok() && version->Minor() >= core::MinorVersion{1, 14};
  if (schematic.empty() && !factory_default) return "ghcr.io/siderolabs/installer:" + tag;
  const std::string id = schematic.empty() ? std::string(kVanillaSchematic) : schematic;
  return fmt::format("factory.talos.dev/{}-installer/{}:{}",
                     schematic.empty() ? "metal" : platform, id, tag);
}

bool RegistryCatalog::Exists(const ImageRef& ref) const {
  if (Listed(ref)) return true;
  if (!ref.digest.empty()) return KnownRepository(ref);
  const std::string name = ref.Name();
  if (name == "ghcr.io/siderolabs/installer") {
    // The vanilla installer is not published from Talos 1.14 on (facts §9).
    auto version = core::ParseTalosVersion(ref.tag);
    return ValidTalosTag(ref.tag) && version->Minor() < core::MinorVersion{1, 14};
  }
  if (auto factory = FactoryInstaller(ref)) {
    return !InstallerTag(ref).empty() && KnownRepository(ref) && FactoryBuilds(ref, *factory);
  }
  if (name == "ghcr.io/siderolabs/kubelet") return ValidKubernetesTag(ref.tag, true);
  for (const char* component :
       {"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kube-proxy"}) {
    if (name == fmt::format("registry.k8s.io/{}", component)) {
      return ValidKubernetesTag(ref.tag, false);
    }
  }
  return false;
}

}  // namespace tr::sim
