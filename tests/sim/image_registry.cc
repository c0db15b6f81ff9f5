#include "tests/sim/image_registry.h"

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
                                 std::set<std::string> schematics)
    : schematics_(std::move(schematics)) {
  for (const auto& image : images) {
    auto ref = ParseImageRef(image);
    if (ref.ok()) images_.insert(ref->Normalized());
  }
}

std::string RegistryCatalog::InstallerTag(const ImageRef& ref) {
  // Image Factory: factory.talos.dev/<kind>/<schematic>; elsewhere (the vanilla and custom
  // installers) the repository's last component names it: ".../installer".
  std::string kind = ref.path.substr(ref.path.rfind('/') + 1);
  if (ref.domain == "factory.talos.dev") kind = ref.path.substr(0, ref.path.find('/'));
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
  if (ref.domain == "factory.talos.dev") {
    const size_t slash = ref.path.find('/');
    return slash != std::string::npos && schematics_.contains(ref.path.substr(slash + 1));
  }
  return false;
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
  if (ref.domain == "factory.talos.dev") {
    return !InstallerTag(ref).empty() && KnownRepository(ref);
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
