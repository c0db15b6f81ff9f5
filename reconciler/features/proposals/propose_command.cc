#include "reconciler/features/proposals/propose_command.h"

#include "base/env.h"
#include "core/api_version.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"

namespace tr::reconciler::proposals {
namespace {

nlohmann::json ChangeJson(const std::optional<core::VersionChange>& change) {
  if (!change) return nullptr;
  return {{"from", change->from.ToString()}, {"to", change->to.ToString()}};
}

std::string ChangeText(std::string_view what, const std::optional<core::VersionChange>& change) {
  if (!change) return "";
  return fmt::format(" {} {} → {}", what, change->from.ToString(), change->to.ToString());
}

}  // namespace

core::RunningVersions RunningOf(const core::ObservedCluster& observed) {
  core::RunningVersions running;
  bool first = true;
  for (const core::NodeObservation& node : observed.nodes) {
    if (!node.reachable || !node.talos || !node.kubelet) return {};
    if (first) {
      running = {.talos = node.talos, .kubernetes = node.kubelet};
      first = false;
    } else if (*running.talos != *node.talos || *running.kubernetes != *node.kubelet) {
      return {};
    }
  }
  return running;
}

core::KnownReleases DryRunReleases(const core::ProfileSet& set) {
  return core::CatalogReleases(set.release_catalog, core::TimePoint{});
}

std::string RenderProposalsText(const core::ProposalOutcome& outcome) {
  std::string text;
  for (const core::Proposal& p : outcome.proposals) {
    text += fmt::format("{}: {}\n", p.branch, p.title);
    for (const core::ProposedCluster& c : p.clusters) {
      text += fmt::format("  {} ({}){}{}\n", c.name, c.file, ChangeText("Talos", c.talos),
                          ChangeText("Kubernetes", c.kubernetes));
    }
  }
  for (const core::ProposalSkip& s : outcome.skipped) {
    text += fmt::format("{}: no proposal: {}\n", s.group, s.reason);
  }
  if (text.empty()) text = "nothing to propose\n";
  return text;
}

std::string RenderProposalsJson(const core::ProposalOutcome& outcome) {
  nlohmann::json proposals = nlohmann::json::array();
  for (const core::Proposal& p : outcome.proposals) {
    nlohmann::json clusters = nlohmann::json::array();
    for (const core::ProposedCluster& c : p.clusters) clusters.push_back(c.name);
    proposals.push_back({{"branch", p.branch},
                         {"group", p.group},
                         {"title", p.title},
                         {"clusters", clusters},
                         {"talos", ChangeJson(p.talos)},
                         {"kubernetes", ChangeJson(p.kubernetes)}});
  }
  nlohmann::json skipped = nlohmann::json::array();
  for (const core::ProposalSkip& s : outcome.skipped) {
    skipped.push_back({{"group", s.group}, {"reason", s.reason}});
  }
  return nlohmann::json{{"apiVersion", std::string(core::kApiVersion)},
                        {"kind", "ProposalReport"},
                        {"proposals", proposals},
                        {"skipped", skipped}}
             .dump(2) +
         "\n";
}

int RunPropose(const ProposeOptions& options, Env& env, std::ostream& out, std::ostream& err) {
  std::optional<core::ProfileSet> set = LoadCheckout(options.input.dir, options.input.shards, err);
  if (!set) return kExitInvalid;
  if (!set->defaults_diagnostics.empty() || !set->invalid.empty()) {
    for (const core::Diagnostic& d : set->defaults_diagnostics) err << d.ToString() << "\n";
    for (const core::InvalidProfile& p : set->invalid) {
      for (const core::Diagnostic& d : p.diagnostics) err << d.ToString() << "\n";
    }
    err << "error: nothing is proposed while a profile or reconciler.yaml is invalid\n";
    return kExitInvalid;
  }
  std::map<std::string, std::string> unobserved;
  std::optional<core::ObservedFleet> fleet =
      ObserveFleet(*set, options.input, env, unobserved, err);
  if (!fleet) return kExitInvalid;
  std::map<std::string, core::RunningVersions> running;
  for (const core::ObservedCluster& c : fleet->clusters) running[c.name] = RunningOf(c);
  const core::ProposalOutcome outcome =
      core::ProposeUpdates(*set, DryRunReleases(*set), running, env.Now());
  out << (options.format == ProposeFormat::kJson ? RenderProposalsJson(outcome)
                                                 : RenderProposalsText(outcome));
  return kExitOk;
}

}  // namespace tr::reconciler::proposals
