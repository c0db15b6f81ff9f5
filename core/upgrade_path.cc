#include "core/upgrade_path.h"

#include "fmt/format.h"

namespace tr::core {
namespace {

// The grid of states (Talos stop i, Kubernetes stop j) and the moves between them.
class PathGrid {
 public:
  PathGrid(const std::vector<Version>& talos, const std::vector<Version>& kubernetes,
           const SupportMatrix& matrix)
      : talos_(talos), kubernetes_(kubernetes), matrix_(matrix) {
    const size_t n = talos.size(), m = kubernetes.size();
    feasible_.assign(n, std::vector<bool>(m, false));
    for (size_t i = n; i-- > 0;) {
      for (size_t j = m; j-- > 0;) {
        feasible_[i][j] = (i == n - 1 && j == m - 1) ||
                          (i + 1 < n && TalosMoveAllowed(i, j) && feasible_[i + 1][j]) ||
                          (j + 1 < m && KubernetesMoveAllowed(i, j) && feasible_[i][j + 1]);
      }
    }
  }

  bool Feasible(size_t i, size_t j) const { return feasible_[i][j]; }
  size_t TalosStops() const { return talos_.size(); }
  size_t KubernetesStops() const { return kubernetes_.size(); }

  bool TalosMoveAllowed(size_t i, size_t j) const { return TalosMoveProblem(i, j).empty(); }
  bool KubernetesMoveAllowed(size_t i, size_t j) const {
    return KubernetesMoveProblem(i, j).empty();
  }

  // Why Talos cannot move from stop i to i+1 while Kubernetes is at stop j; empty if it can.
  std::string TalosMoveProblem(size_t i, size_t j) const {
    const Version& from = talos_[i];
    const Version& to = talos_[i + 1];
    if (!matrix_.Find(to.Minor())) {
      return fmt::format(
          "Talos {} is not in the support matrix (add it under supportMatrix "
          "in reconciler.yaml)",
          to.Minor().ToString());
    }
    if (!matrix_.Supports(to.Minor(), kubernetes_[j].Minor())) {
      return fmt::format("Talos {} does not support Kubernetes {}", to.ToString(),
                         kubernetes_[j].ToString());
    }
    if (from < to && !matrix_.AllowsUpgrade(from, to.Minor())) {
      return fmt::format("Talos {} cannot be upgraded from {} (needs {} or newer)", to.ToString(),
                         from.ToString(),
                         matrix_.Find(to.Minor())->minimum_upgrade_from.ToString());
    }
    return "";
  }

  std::string KubernetesMoveProblem(size_t i, size_t j) const {
    if (!matrix_.Supports(talos_[i].Minor(), kubernetes_[j + 1].Minor())) {
      return fmt::format("Talos {} does not support Kubernetes {}", talos_[i].ToString(),
                         kubernetes_[j + 1].ToString());
    }
    return "";
  }

  VersionHop TalosHop(size_t i) const { return {true, talos_[i], talos_[i + 1]}; }
  VersionHop KubernetesHop(size_t j) const { return {false, kubernetes_[j], kubernetes_[j + 1]}; }

 private:
  const std::vector<Version>& talos_;
  const std::vector<Version>& kubernetes_;
  const SupportMatrix& matrix_;
  std::vector<std::vector<bool>> feasible_;
};

// Explains a missing path from the furthest state the allowed moves reach.
std::string ExplainNoPath(const PathGrid& grid, const std::vector<Version>& talos,
                          const std::vector<Version>& kubernetes) {
  size_t best_i = 0, best_j = 0;
  std::vector<std::vector<bool>> reached(grid.TalosStops(),
                                         std::vector<bool>(grid.KubernetesStops(), false));
  reached[0][0] = true;
  for (size_t i = 0; i < grid.TalosStops(); ++i) {
    for (size_t j = 0; j < grid.KubernetesStops(); ++j) {
      if (!reached[i][j]) continue;
      if (i + j > best_i + best_j) best_i = i, best_j = j;
      if (i + 1 < grid.TalosStops() && grid.TalosMoveAllowed(i, j)) reached[i + 1][j] = true;
      if (j + 1 < grid.KubernetesStops() && grid.KubernetesMoveAllowed(i, j))
        reached[i][j + 1] = true;
    }
  }
  std::vector<std::string> problems;
  if (best_i + 1 < grid.TalosStops()) problems.push_back(grid.TalosMoveProblem(best_i, best_j));
  if (best_j + 1 < grid.KubernetesStops())
    problems.push_back(grid.KubernetesMoveProblem(best_i, best_j));
  std::string why;
  for (const std::string& p : problems) {
    if (p.empty()) continue;
    why += why.empty() ? p : "; and " + p;
  }
  return fmt::format(
      "No safe upgrade path from Talos {} with Kubernetes {} to Talos {} with Kubernetes {}: "
      "stuck at Talos {} with Kubernetes {}: {}. Upgrade in smaller steps, or extend the "
      "support matrix if a newer one allows it.",
      talos.front().ToString(), kubernetes.front().ToString(), talos.back().ToString(),
      kubernetes.back().ToString(), talos[best_i].ToString(), kubernetes[best_j].ToString(), why);
}

}  // namespace

absl::StatusOr<std::vector<Version>> VersionStops(
    const Version& from, const Version& to, std::string_view component,
    const std::function<std::optional<Version>(MinorVersion)>& latest) {
  if (from.major != to.major) {
    return absl::InvalidArgumentError(
        fmt::format("{} {} to {} crosses a major version; plan that upgrade by hand", component,
                    from.ToString(), to.ToString()));
  }
  std::vector<Version> stops{from};
  if (from == to) return stops;
  const int direction = from < to ? 1 : -1;
  for (MinorVersion m = from.Minor(); m != to.Minor();) {
    m.minor += direction;
    if (m == to.Minor()) break;
    std::optional<Version> release = latest(m);
    if (!release) {
      return absl::FailedPreconditionError(
          fmt::format("no known release of {} {} to pass through; add one under releases in "
                      "reconciler.yaml",
                      component, m.ToString()));
    }
    stops.push_back(*release);
  }
  stops.push_back(to);
  return stops;
}

absl::StatusOr<std::vector<VersionHop>> FindUpgradePath(const std::vector<Version>& talos,
                                                        const std::vector<Version>& kubernetes,
                                                        UpgradeOrder order,
                                                        const SupportMatrix& matrix) {
  PathGrid grid(talos, kubernetes, matrix);
  if (!grid.Feasible(0, 0)) {
    return absl::FailedPreconditionError(ExplainNoPath(grid, talos, kubernetes));
  }
  std::vector<VersionHop> hops;
  size_t i = 0, j = 0;
  const bool talos_first = order == UpgradeOrder::kTalosFirst;
  while (i + 1 < talos.size() || j + 1 < kubernetes.size()) {
    const bool talos_ok =
        i + 1 < talos.size() && grid.TalosMoveAllowed(i, j) && grid.Feasible(i + 1, j);
    const bool kubernetes_ok =
        j + 1 < kubernetes.size() && grid.KubernetesMoveAllowed(i, j) && grid.Feasible(i, j + 1);
    if (talos_ok && (talos_first || !kubernetes_ok)) {
      hops.push_back(grid.TalosHop(i++));
    } else {
      hops.push_back(grid.KubernetesHop(j++));
    }
  }
  return hops;
}

}  // namespace tr::core
