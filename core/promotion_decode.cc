#include "core/promotion_decode.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/names.h"
#include "fmt/format.h"

namespace tr::core {
namespace {

constexpr std::string_view kAfterPath = "spec.promotion.after";

std::optional<Promotion::After> DecodeAfterItem(const Field& item) {
  std::optional<std::string> name = ReadChecked(item, CheckDns1123Label);
  if (!name) return std::nullopt;
  return Promotion::After{*name, item.node->mark.line, item.node->mark.column};
}

Diagnostic AfterDiagnostic(const ClusterProfile& profile, size_t index, std::string message) {
  const Promotion::After& a = profile.promotion->after[index];
  return Diagnostic{profile.file, a.line, a.column, fmt::format("{}[{}]", kAfterPath, index),
                    std::move(message)};
}

// The cycle through `start` along "after" edges, as names from `start` back to it; empty
// when `start` is on none.
std::vector<std::string> CycleThrough(const std::string& start,
                                      const std::map<std::string, std::vector<std::string>>& edges) {
  std::map<std::string, std::string> parent;
  std::vector<std::string> stack{start};
  std::set<std::string> seen{start};
  while (!stack.empty()) {
    const std::string at = stack.back();
    stack.pop_back();
    auto it = edges.find(at);
    if (it == edges.end()) continue;
    for (const std::string& next : it->second) {
      if (next == start) {
        std::vector<std::string> cycle{start};
        for (std::string n = at; n != start; n = parent[n]) cycle.insert(cycle.begin() + 1, n);
        cycle.push_back(start);
        return cycle;
      }
      if (seen.insert(next).second) {
        parent[next] = at;
        stack.push_back(next);
      }
    }
  }
  return {};
}

}  // namespace

std::optional<Promotion> DecodePromotion(const Field& field) {
  MappingReader m(field, {"after", "soak"});
  if (!m.ok()) return std::nullopt;
  Promotion promotion;
  bool ok = true;
  const Field after = m.Required("after");
  std::vector<Field> items = ReadList(after);
  if (!after.present() || !after.node->IsSequence()) ok = false;
  if (ok && items.empty()) {
    after.Error("must name at least one cluster");
    ok = false;
  }
  for (const Field& item : items) {
    std::optional<Promotion::After> a = DecodeAfterItem(item);
    if (!a) {
      ok = false;
    } else if (std::any_of(promotion.after.begin(), promotion.after.end(),
                           [&](const Promotion::After& b) { return b.cluster == a->cluster; })) {
      item.Error(fmt::format("\"{}\" is listed twice", a->cluster));
      ok = false;
    } else {
      promotion.after.push_back(*a);
    }
  }
  if (const Field soak = m.Optional("soak"); soak.present()) {
    std::optional<std::chrono::seconds> d = ReadDuration(soak, /*allow_zero=*/true);
    if (d) promotion.soak = *d;
    ok = ok && d.has_value();
  }
  if (!ok) return std::nullopt;
  return promotion;
}

void ValidatePromotions(ProfileSet& set) {
  std::set<std::string> known;
  for (const ClusterProfile& p : set.profiles) known.insert(p.name);
  for (const InvalidProfile& p : set.invalid) known.insert(p.cluster);
  std::map<std::string, std::vector<std::string>> edges;
  for (const ClusterProfile& p : set.profiles) {
    if (!p.promotion) continue;
    for (const Promotion::After& a : p.promotion->after) edges[p.name].push_back(a.cluster);
  }
  std::vector<ClusterProfile> valid;
  for (ClusterProfile& p : set.profiles) {
    Diagnostics problems;
    for (size_t i = 0; p.promotion && i < p.promotion->after.size(); ++i) {
      const std::string& name = p.promotion->after[i].cluster;
      if (!known.contains(name)) {
        problems.push_back(AfterDiagnostic(
            p, i, fmt::format("unknown cluster \"{}\": no clusters/{}.yaml", name, name)));
      }
    }
    if (std::vector<std::string> cycle = CycleThrough(p.name, edges); !cycle.empty()) {
      std::string path;
      for (const std::string& n : cycle) path += (path.empty() ? "" : " → ") + n;
      const auto first = std::find_if(
          p.promotion->after.begin(), p.promotion->after.end(),
          [&](const Promotion::After& a) { return a.cluster == cycle[1]; });
      problems.push_back(
          AfterDiagnostic(p, static_cast<size_t>(first - p.promotion->after.begin()),
                          "promotion cycle: " + path + "; no cluster in it could ever start"));
    }
    std::sort(problems.begin(), problems.end(), [](const Diagnostic& a, const Diagnostic& b) {
      return std::tie(a.line, a.column) < std::tie(b.line, b.column);
    });
    if (problems.empty()) {
      valid.push_back(std::move(p));
    } else {
      set.invalid.push_back({p.file, p.name, std::move(problems)});
    }
  }
  set.profiles = std::move(valid);
  std::sort(set.invalid.begin(), set.invalid.end(),
            [](const InvalidProfile& a, const InvalidProfile& b) { return a.file < b.file; });
}

}  // namespace tr::core
