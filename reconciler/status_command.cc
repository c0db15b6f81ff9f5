#include "reconciler/status_command.h"

#include "core/status_yaml.h"
#include "fmt/format.h"
#include "gitsource/git_source.h"
#include "gitsource/status_writer.h"
#include "nlohmann/json.hpp"
#include "reconciler/status_store.h"

namespace tr::reconciler {
namespace {

std::string ComponentText(const core::ComponentStatus& c) {
  std::string s = c.current == c.target || c.target.empty()
                      ? c.current
                      : fmt::format("{} → {}", c.current, c.target);
  s += fmt::format(" {}", core::ComponentStateName(c.state));
  if (!c.progress.empty() && c.state == core::ComponentState::kInProgress) s += " " + c.progress;
  return s;
}

nlohmann::json ComponentJson(const core::ComponentStatus& c) {
  return {{"current", c.current},     {"target", c.target},
          {"available", c.available}, {"status", core::ComponentStateName(c.state)},
          {"message", c.message},     {"progress", c.progress}};
}

nlohmann::json GatesJson(const core::GateState& g) {
  nlohmann::json results = nlohmann::json::array();
  for (const core::GateResult& r : g.results) {
    results.push_back({{"name", r.name},
                       {"healthy", r.healthy},
                       {"message", r.message},
                       {"checked", core::FormatTimestamp(r.checked)}});
  }
  return results;
}

}  // namespace

int RunStatus(const StatusCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (absl::Status s = gitsource::ConfigureLibgit2(); !s.ok()) {
    err << "error: " << s.message() << "\n";
    return 1;
  }
  auto source = gitsource::LibGitSource::Open(options.git);
  if (!source.ok()) {
    err << "error: " << source.status().message() << "\n";
    return 1;
  }
  gitsource::StatusWriterConfig config;
  config.branch = options.status_branch;
  auto writer = gitsource::GitStatusWriter::Create(**source, config, Env::Default());
  if (!writer.ok()) {
    err << "error: " << writer.status().message() << "\n";
    return 1;
  }
  GitStatusStore store(**writer);
  auto statuses = store.LoadAll({});
  if (!statuses.ok()) {
    err << "error: " << statuses.status().message() << "\n";
    return 1;
  }
  nlohmann::json all = nlohmann::json::array();
  for (const auto& [cluster, s] : *statuses) {
    if (options.json) {
      all.push_back({{"cluster", cluster},
                     {"phase", core::ClusterPhaseName(s.phase)},
                     {"message", s.message},
                     {"updated", core::FormatTimestamp(s.updated)},
                     {"talos", ComponentJson(s.talos)},
                     {"kubernetes", ComponentJson(s.kubernetes)},
                     {"gates", GatesJson(s.gates)}});
      continue;
    }
    out << fmt::format("{:<20} {:<20} talos {:<32} kubernetes {:<28} {}\n", cluster,
                       core::ClusterPhaseName(s.phase), ComponentText(s.talos),
                       ComponentText(s.kubernetes), s.message);
    for (const core::GateResult& r : s.gates.results) {
      out << fmt::format("  gate {:<18} {:<9} {} ({})\n", r.name,
                         r.healthy ? "healthy" : "unhealthy", r.message,
                         core::FormatTimestamp(r.checked));
    }
  }
  if (options.json) out << all.dump(2) << "\n";
  if (!options.json && statuses->empty()) out << "no status recorded yet\n";
  return 0;
}

}  // namespace tr::reconciler
