#include "tests/sim/catalog/image_factory.h"

#include <algorithm>

#include "core/version.h"
#include "fmt/format.h"
#include "tests/sim/catalog/image_registry.h"

namespace tr::sim {
namespace {

// An extension's own version in the simulation: the Talos tag it was built for (real
// extensions carry their upstream version; one that moves with Talos shows an upgrade).
std::string ExtensionRef(std::string_view name, std::string_view tag) {
  return fmt::format("ghcr.io/{}:{}", name, tag);
}

std::string ShortName(std::string_view name) {
  return std::string(name.substr(name.rfind('/') + 1));
}

bool OlderTag(const std::string& a, const std::string& b) {
  auto va = core::ParseTalosVersion(a);
  auto vb = core::ParseTalosVersion(b);
  if (va.ok() && vb.ok()) return *va < *vb;
  return a < b;
}

}  // namespace

ImageFactory::ImageFactory(FactorySpec spec, std::vector<std::string> default_versions,
                           std::set<std::string> known_schematics) {
  versions_declared_ = !spec.versions.empty();
  for (auto& v : versions_declared_ ? spec.versions : default_versions) {
    versions_.insert(v.starts_with("v") ? v : "v" + v);
  }
  extensions_ = std::move(spec.extensions);
  if (extensions_.empty()) {
    for (auto name : kDefaultFactoryExtensions) extensions_.push_back({std::string(name), {}});
  }
  for (const auto& id : known_schematics) schematics_.emplace(id, std::nullopt);
  Schematic vanilla;
  schematics_[SchematicId(vanilla)] = vanilla;
}

void ImageFactory::set_url(std::string url) {
  std::lock_guard lock(mu_);
  url_ = std::move(url);
}

std::string ImageFactory::url() const {
  std::lock_guard lock(mu_);
  return url_;
}

std::string ImageFactory::host() const {
  std::lock_guard lock(mu_);
  const size_t scheme = url_.find("://");
  return scheme == std::string::npos ? url_ : url_.substr(scheme + 3);
}

std::string ImageFactory::Register(const Schematic& schematic) {
  std::string id = SchematicId(schematic);
  std::lock_guard lock(mu_);
  schematics_[id] = schematic;
  return id;
}

bool ImageFactory::Knows(std::string_view id) const {
  std::lock_guard lock(mu_);
  return schematics_.find(id) != schematics_.end();
}

std::vector<std::string> ImageFactory::Versions() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out(versions_.begin(), versions_.end());
  std::sort(out.begin(), out.end(), OlderTag);
  return out;
}

bool ImageFactory::HasVersionLocked(std::string_view tag) const {
  return versions_.contains(std::string(tag));
}

bool ImageFactory::HasVersion(std::string_view tag) const {
  std::lock_guard lock(mu_);
  return HasVersionLocked(tag);
}

void ImageFactory::AddVersion(std::string tag) {
  std::lock_guard lock(mu_);
  if (!tag.starts_with("v")) tag = "v" + tag;
  if (!broken_.contains(tag)) versions_.insert(std::move(tag));
}

void ImageFactory::MarkBroken(std::string tag) {
  std::lock_guard lock(mu_);
  if (!tag.starts_with("v")) tag = "v" + tag;
  versions_.erase(tag);
  broken_.insert(std::move(tag));
}

std::vector<std::string> ImageFactory::BrokenVersions() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out(broken_.begin(), broken_.end());
  std::sort(out.begin(), out.end(), OlderTag);
  return out;
}

bool ImageFactory::IsBroken(std::string_view tag) const {
  std::lock_guard lock(mu_);
  return broken_.contains(std::string(tag));
}

void ImageFactory::CountBrokenRead() {
  std::lock_guard lock(mu_);
  ++broken_reads_;
}

int ImageFactory::broken_reads() const {
  std::lock_guard lock(mu_);
  return broken_reads_;
}

std::vector<OfficialExtension> ImageFactory::OfficialLocked(std::string_view tag) const {
  std::vector<OfficialExtension> out;
  for (const auto& ext : extensions_) {
    if (!ext.versions.empty() &&
        std::find(ext.versions.begin(), ext.versions.end(), tag) == ext.versions.end()) {
      continue;
    }
    const std::string ref = ExtensionRef(ext.name, tag);
    auto parsed = ParseImageRef(ref);
    out.push_back({.name = ext.name,
                   .ref = ref,
                   .digest = parsed.ok() ? ImageDigest(*parsed) : std::string(),
                   .author = "Sidero Labs",
                   .description = fmt::format("{} system extension", ShortName(ext.name))});
  }
  return out;
}

absl::StatusOr<std::vector<OfficialExtension>> ImageFactory::OfficialExtensions(
    std::string_view tag) const {
  std::lock_guard lock(mu_);
  if (!HasVersionLocked(tag)) {
    return absl::NotFoundError(fmt::format("version {} not found", tag));
  }
  return OfficialLocked(tag);
}

absl::StatusOr<std::vector<InstalledExtension>> ImageFactory::ImageExtensions(
    std::string_view id, std::string_view tag, std::string_view api_url) const {
  std::lock_guard lock(mu_);
  auto it = schematics_.find(id);
  if (it == schematics_.end()) return absl::NotFoundError(fmt::format("schematic {} not found", id));
  std::vector<InstalledExtension> out;
  const std::vector<OfficialExtension> available = OfficialLocked(tag);
  for (const auto& name : it->second ? it->second->official_extensions : std::vector<std::string>{}) {
    auto found = std::find_if(available.begin(), available.end(),
                              [&](const OfficialExtension& e) { return e.name == name; });
    if (found == available.end()) {
      return absl::FailedPreconditionError(fmt::format(
          "official extension \"{}\" is not available for Talos version {}", name, tag));
    }
    out.push_back({.id = "",
                   .image = "",
                   .name = ShortName(name),
                   .version = std::string(tag),
                   .author = found->author,
                   .description = found->description});
  }
  out.push_back({.id = "",
                 .image = "",
                 .name = "schematic",
                 .version = std::string(id),
                 .author = fmt::format("Image Factory ({})", api_url),
                 .description = "Virtual extension which specifies the schematic of the image "
                                "built with schematic."});
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].id = std::to_string(i);
    out[i].image = out[i].id + ".sqsh";
  }
  return out;
}

}  // namespace tr::sim
