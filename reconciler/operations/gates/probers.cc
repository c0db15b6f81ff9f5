#include "reconciler/operations/gates/probers.h"

#include <map>
#include <variant>

#include "base/mutex.h"

namespace tr::reconciler::gates {
namespace {

using ProberTable = std::map<std::string, Prober, std::less<>>;

struct ProberRegistry {
  Mutex mu;
  ProberTable by_type ABSL_GUARDED_BY(mu);
};

// For every type of a check's sum type, by its kType, the overload of Probe that takes it.
template <typename... Types>
ProberTable ProbersByType(const std::variant<Types...>*) {
  return {{std::string(Types::kType), [](const core::HealthCheck& check, const ProbeScope& scope) {
             return Probe(std::get<Types>(check.spec), check, scope);
           }}...};
}

// Every type of core::HealthCheckSpec with its probe, then what RegisterProber adds.
ProberRegistry& Registry() {
  static ProberRegistry* registry = [] {
    auto* r = new ProberRegistry;
    MutexLock lock(r->mu);
    r->by_type = ProbersByType(static_cast<const core::HealthCheckSpec*>(nullptr));
    return r;
  }();
  return *registry;
}

}  // namespace

Prober ProberFor(std::string_view type) {
  ProberRegistry& registry = Registry();
  MutexLock lock(registry.mu);
  const auto it = registry.by_type.find(type);
  return it == registry.by_type.end() ? Prober() : it->second;
}

absl::Status RegisterProber(std::string type, Prober prober) {
  ProberRegistry& registry = Registry();
  MutexLock lock(registry.mu);
  if (!registry.by_type.emplace(type, std::move(prober)).second) {
    return absl::AlreadyExistsError("health checks of type " + type + " have a prober");
  }
  return absl::OkStatus();
}

}  // namespace tr::reconciler::gates
