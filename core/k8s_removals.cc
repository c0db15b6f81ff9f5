#include "core/k8s_removals.h"

#include <algorithm>

#include "core/text.h"
#include "fmt/format.h"

namespace tr::core {

std::string RemovedApiResource::ListPath() const {
  return "/apis/" + group + "/" + version + "/" + resource;
}

std::string RemovedApiResource::Name() const { return resource + "." + version + "." + group; }

KubernetesRemovals RemovalsForUpgrade(MinorVersion from, MinorVersion to) {
  return RemovalTableEntry(from, to).value_or(KubernetesRemovals{});
}

namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

bool Contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

std::vector<std::string> RemovedItemsInArgs(const std::vector<std::string>& args,
                                            const std::vector<std::string>& flags,
                                            const std::vector<std::string>& gates,
                                            const std::vector<std::string>& admission_plugins) {
  std::vector<std::string> found;
  for (const std::string& arg : args) {
    if (!arg.starts_with("--")) continue;
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (Contains(flags, name)) found.push_back("flag --" + name);
    if (eq == std::string::npos) continue;
    const std::string_view value = std::string_view(arg).substr(eq + 1);
    if (name == "feature-gates") {
      for (std::string_view gate : Split(value, ',')) {
        const std::string gate_name(Trim(gate.substr(0, gate.find('='))));
        if (Contains(gates, gate_name)) found.push_back("feature gate " + gate_name);
      }
    } else if (name == "enable-admission-plugins" || name == "disable-admission-plugins") {
      for (std::string_view plugin : Split(value, ',')) {
        if (Contains(admission_plugins, Trim(plugin))) {
          found.push_back(fmt::format("admission plugin {} in --{}", Trim(plugin), name));
        }
      }
    }
  }
  return found;
}

}  // namespace tr::core
