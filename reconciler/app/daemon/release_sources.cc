#include "reconciler/app/daemon/release_sources.h"

#include <vector>

#include "base/mutex.h"
#include "reconciler/clients/factory/image_factory.h"
#include "reconciler/clients/registry/installer_tags.h"

namespace tr::reconciler {
namespace {

OpenedReleaseSource InstallerRegistrySource(const DaemonConfig& config) {
  const auto& registry = config.installer_registry;
  if (!registry) return {};
  return {std::make_unique<registry::TagListSource>(
              [options = *registry](std::stop_token stop) {
                return registry::ListRegistryTags(options, stop);
              }),
          registry->ttl};
}

OpenedReleaseSource ImageFactorySource(const DaemonConfig& config) {
  if (config.image_factory.origin.empty()) return {};
  return {std::make_unique<factory::FactoryReleaseSource>(config.image_factory),
          config.image_factory_flags.ttl};
}

struct SourceRegistry {
  Mutex mu;
  std::vector<ReleaseSourceEntry> entries ABSL_GUARDED_BY(mu);
};

// Every release source, one line each, in the order they are tried.
SourceRegistry& Registry() {
  static SourceRegistry* registry = [] {
    auto* r = new SourceRegistry;
    MutexLock lock(r->mu);
    r->entries = {{"--installer-registry", InstallerRegistrySource},
                  {"--image-factory", ImageFactorySource}};
    return r;
  }();
  return *registry;
}

}  // namespace

void RegisterReleaseSource(ReleaseSourceEntry entry) {
  SourceRegistry& registry = Registry();
  MutexLock lock(registry.mu);
  registry.entries.push_back(std::move(entry));
}

std::unique_ptr<releases::ReleaseCache> OpenReleaseCache(const DaemonConfig& config, Env& env) {
  std::vector<ReleaseSourceEntry> entries;
  {
    SourceRegistry& registry = Registry();
    MutexLock lock(registry.mu);
    entries = registry.entries;
  }
  for (const ReleaseSourceEntry& entry : entries) {
    OpenedReleaseSource opened = entry.open(config);
    if (opened.source) {
      return std::make_unique<releases::ReleaseCache>(std::move(opened.source), opened.ttl, env);
    }
  }
  return nullptr;
}

}  // namespace tr::reconciler
