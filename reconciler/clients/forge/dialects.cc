// The registry of dialects: one line a forge.
#include "reconciler/clients/forge/forge_dialect.h"

namespace tr::reconciler::forge {

// Each defined in the file of its name.
const ForgeDialect& Github();
const ForgeDialect& Gitlab();
const ForgeDialect& Gitea();
const ForgeDialect& Forgejo();
const ForgeDialect& Generic();

const std::vector<const ForgeDialect*>& AllDialects() {
  static const std::vector<const ForgeDialect*> all{&Github(), &Gitlab(), &Gitea(), &Forgejo(),
                                                    &Generic()};
  return all;
}

const ForgeDialect* FindDialect(std::string_view name) {
  for (const ForgeDialect* dialect : AllDialects()) {
    if (dialect->name() == name) return dialect;
  }
  return nullptr;
}

const ForgeApiDialect* FindApiDialect(std::string_view name) {
  const ForgeDialect* dialect = FindDialect(name);
  return dialect == nullptr ? nullptr : dialect->api();
}

std::string DialectNames(std::string_view separator, bool api_only) {
  std::string names;
  for (const ForgeDialect* dialect : AllDialects()) {
    if (api_only && dialect->api() == nullptr) continue;
    if (!names.empty()) names += separator;
    names += dialect->name();
  }
  return names;
}

}  // namespace tr::reconciler::forge
