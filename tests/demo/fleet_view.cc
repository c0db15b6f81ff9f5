#include "tests/demo/fleet_view.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <regex>
#include <set>
#include <vector>

#include "fmt/format.h"

namespace tr::demo {
namespace {

struct NodeView {
  std::string name, talos, kubelet;
  bool ready = false, reachable = true;
};

struct Component {
  std::string current, target, status;
};

struct ClusterView {
  std::string cluster, phase, message;
  Component talos, kubernetes;
  std::vector<NodeView> nodes;
  std::set<std::string> in_flight;
};

std::string Text(const YAML::Node& node) {
  return node && node.IsScalar() ? node.as<std::string>() : std::string();
}

// "v1.12.0" and "1.12.0" are one version.
std::string Bare(const std::string& version) {
  return version.starts_with('v') ? version.substr(1) : version;
}

Component ReadComponent(const YAML::Node& node) {
  return {Bare(Text(node["current"])), Bare(Text(node["target"])), Text(node["status"])};
}

std::optional<ClusterView> Parse(const std::string& text) {
  try {
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return std::nullopt;
    ClusterView v{Text(root["cluster"]),
                  Text(root["phase"]),
                  Text(root["message"]),
                  ReadComponent(root["talos"]),
                  ReadComponent(root["kubernetes"]),
                  {},
                  {}};
    for (const YAML::Node& n : root["nodes"]) {
      v.nodes.push_back({Text(n["name"]), Bare(Text(n["talos"])), Bare(Text(n["kubelet"])),
                         n["ready"] && n["ready"].as<bool>(),
                         !n["reachable"] || n["reachable"].as<bool>()});
    }
    for (const YAML::Node& op : root["inFlight"]) v.in_flight.insert(Text(op["node"]));
    return v;
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

// Which version the bar counts: Talos while any node is off the Talos target, then Kubernetes.
enum class Counting { kTalos, kKubernetes, kNothing };

Counting WhatMoves(const ClusterView& v) {
  auto off = [&](std::string NodeView::*version, const std::string& target) {
    return !target.empty() && std::any_of(v.nodes.begin(), v.nodes.end(),
                                          [&](const NodeView& n) { return n.*version != target; });
  };
  if (off(&NodeView::talos, v.talos.target)) return Counting::kTalos;
  if (off(&NodeView::kubelet, v.kubernetes.target)) return Counting::kKubernetes;
  return Counting::kNothing;
}

// The versions the nodes run when the status names none (it may not while nodes reboot).
std::string Current(const Component& c, const std::vector<NodeView>& nodes,
                    std::string NodeView::*version) {
  if (!c.current.empty() || nodes.empty()) return c.current;
  const std::string first = nodes.front().*version;
  for (const NodeView& n : nodes) {
    if (n.*version != first) return "mixed";
  }
  return first;
}

std::string Versions(const std::string& name, const std::string& current,
                     const std::string& target) {
  if (current.empty() && target.empty()) return "";
  if (target.empty() || current == target) return name + " " + current;
  return fmt::format("{} {} -> {}", name, current.empty() ? "?" : current, target);
}

}  // namespace

std::string FleetLine(const std::string& status_yaml) {
  const std::optional<ClusterView> parsed = Parse(status_yaml);
  if (!parsed) return "(status not readable)";
  const ClusterView& v = *parsed;
  const Counting counting = WhatMoves(v);
  std::string bar;
  int done = 0;
  for (const NodeView& n : v.nodes) {
    const bool on_target = counting == Counting::kNothing ||
                           (counting == Counting::kTalos ? n.talos == v.talos.target
                                                         : n.kubelet == v.kubernetes.target);
    const bool moving = v.in_flight.contains(n.name) || !n.reachable || (on_target && !n.ready);
    bar += moving ? '>' : on_target ? '#' : '.';
    done += !moving && on_target;
  }
  // The bar holds the count; a count in the message could be of another moment of the rollout.
  static const std::regex count(R"( ?\([0-9]+/[0-9]+\))");
  std::string message = std::regex_replace(v.message, count, "");
  if (message.size() > 72) message = message.substr(0, 69) + "...";
  const std::string talos =
      Versions("talos", Current(v.talos, v.nodes, &NodeView::talos), v.talos.target);
  const std::string kubernetes =
      Versions("k8s", Current(v.kubernetes, v.nodes, &NodeView::kubelet), v.kubernetes.target);
  return fmt::format("{:<10} [{:<5}] {}/{}  {:<19} {:<24} {:<20} {}", v.cluster, bar, done,
                     v.nodes.size(), v.phase, talos, kubernetes, message);
}

std::string RecapLine(const std::string& before_yaml, const std::string& after_yaml) {
  const std::optional<ClusterView> before = Parse(before_yaml), after = Parse(after_yaml);
  if (!before || !after) return "(status not readable)";
  int talos_moved = 0, kubelets_moved = 0;
  for (const NodeView& n : after->nodes) {
    for (const NodeView& m : before->nodes) {
      if (m.name != n.name) continue;
      talos_moved += m.talos != n.talos;
      kubelets_moved += m.kubelet != n.kubelet;
    }
  }
  std::vector<std::string> parts;
  const std::string talos_from = Current(before->talos, before->nodes, &NodeView::talos);
  const std::string talos_to = Current(after->talos, after->nodes, &NodeView::talos);
  if (talos_from != talos_to) {
    parts.push_back(fmt::format("Talos {} -> {} on {} of {} nodes", talos_from, talos_to,
                                talos_moved, after->nodes.size()));
  }
  const std::string k8s_from = Current(before->kubernetes, before->nodes, &NodeView::kubelet);
  const std::string k8s_to = Current(after->kubernetes, after->nodes, &NodeView::kubelet);
  if (k8s_from != k8s_to) {
    parts.push_back(fmt::format("Kubernetes {} -> {} on {} of {} kubelets", k8s_from, k8s_to,
                                kubelets_moved, after->nodes.size()));
  }
  std::string line = fmt::format("{:<10} ", after->cluster);
  if (parts.empty()) return line + "unchanged, " + after->phase + ": " + after->message;
  for (size_t i = 0; i < parts.size(); ++i) line += (i ? "; " : "") + parts[i];
  return line + " (" + after->phase + ")";
}

}  // namespace tr::demo
