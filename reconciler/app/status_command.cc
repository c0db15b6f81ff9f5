#include "reconciler/app/status_command.h"

#include <stdlib.h>

#include <cstdlib>

#include "core/cluster_report.h"
#include "core/status_yaml.h"
#include "fmt/format.h"
#include "gitsource/git_source.h"
#include "gitsource/status_writer.h"
#include "reconciler/app/status_detail.h"
#include "reconciler/loop/status_store.h"

namespace tr::reconciler {
namespace {

std::string VersionText(const core::ComponentStatus& c) {
  if (c.current.empty() && c.target.empty()) return "-";
  if (c.current == c.target || c.target.empty()) return c.current;
  return fmt::format("{}→{}", c.current.empty() ? "?" : c.current, c.target);
}

std::string ProgressText(const core::ClusterStatus& s) {
  for (const core::ComponentStatus* c : {&s.talos, &s.kubernetes}) {
    if (c->state == core::ComponentState::kInProgress && !c->progress.empty()) return c->progress;
  }
  return "-";
}

std::string Age(core::TimePoint at, core::TimePoint now) {
  return ShortDuration(std::chrono::duration_cast<std::chrono::seconds>(now - at));
}

std::string RenderTable(const std::map<std::string, core::ClusterStatus>& statuses,
                        core::TimePoint now) {
  constexpr const char* kRow = "{:<20} {:<20} {:<16} {:<16} {:<8} {:<12} {:<5} {}\n";
  std::string out = fmt::format(kRow, "CLUSTER", "PHASE", "TALOS", "KUBERNETES", "PROGRESS",
                                "REVISION", "AGE", "MESSAGE");
  for (const auto& [cluster, s] : statuses) {
    const std::string& commit =
        s.desired_commit_applied.empty() ? s.desired_commit_attempted : s.desired_commit_applied;
    out += fmt::format(kRow, cluster, core::ClusterPhaseName(s.phase), VersionText(s.talos),
                       VersionText(s.kubernetes), ProgressText(s),
                       commit.empty() ? "-" : commit.substr(0, 12), Age(s.updated, now), s.message);
    for (const core::GateResult& r : s.gates.results) {
      out +=
          fmt::format("  gate {:<18} {:<9} {} ({})\n", r.name, r.healthy ? "healthy" : "unhealthy",
                      r.message, core::FormatTimestamp(r.checked));
    }
  }
  return out;
}

std::vector<core::ClusterStatus> Listed(
    const std::map<std::string, core::ClusterStatus>& statuses) {
  std::vector<core::ClusterStatus> list;
  for (const auto& [cluster, s] : statuses) list.push_back(s);
  return list;
}

// A mirror directory for a one-off read, removed at the end.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/tr-status-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Reads the branch once; the statuses to print, or the error to report.
// Files skipped on the branch are warned about on `err`.
absl::StatusOr<std::map<std::string, core::ClusterStatus>> ReadStatuses(
    gitsource::GitStatusWriter& writer, const StatusCommandOptions& options, std::ostream& err) {
  auto files = writer.ReadLatestIfBranchExists();
  if (!files.ok()) return files.status();
  if (!files->has_value()) {
    return absl::NotFoundError(fmt::format(
        "the status branch {} does not exist on {} (is --status-branch right? the daemon "
        "creates it with its first status)",
        options.status_branch, options.git.remote.url));
  }
  DecodedStatuses decoded = DecodeStatusFiles(**files);
  for (const gitsource::SkippedStatusFile& skipped : decoded.skipped) {
    err << "warning: skipped " << skipped.path << " (" << skipped.reason << "): " << skipped.detail
        << "\n";
  }
  if (options.cluster.empty()) return std::move(decoded.statuses);
  auto found = decoded.statuses.find(options.cluster);
  if (found == decoded.statuses.end()) {
    return absl::NotFoundError(
        fmt::format("no status for cluster {} on {}", options.cluster, options.status_branch));
  }
  return std::map<std::string, core::ClusterStatus>{*found};
}

std::string Render(const StatusCommandOptions& options,
                   const std::map<std::string, core::ClusterStatus>& statuses,
                   core::TimePoint now) {
  if (options.output == "json") {
    return core::RenderStatusReport(Listed(statuses), core::ReportFormat::kJson);
  }
  if (options.output == "yaml") {
    return core::RenderStatusReport(Listed(statuses), core::ReportFormat::kYaml);
  }
  if (options.output == "markdown") return core::RenderStatusMarkdown(Listed(statuses));
  if (statuses.empty()) return "no status recorded yet\n";
  if (!options.cluster.empty()) return RenderClusterDetail(statuses.begin()->second, now);
  return RenderTable(statuses, now);
}

}  // namespace

int RunStatus(const StatusCommandOptions& given, std::ostream& out, std::ostream& err) {
  auto fail = [&err](const absl::Status& s) {
    err << "error: " << s.message() << "\n";
    return 1;
  };
  if (absl::Status s = FinishGitFlags(given); !s.ok()) return fail(s);
  if (absl::Status s = gitsource::ConfigureLibgit2(Libgit2SettingsOf(given)); !s.ok()) {
    return fail(s);
  }
  StatusCommandOptions options = given;
  ScratchDir scratch;
  if (options.git.state_dir.empty()) options.git.state_dir = scratch.path();
  Env& env = Env::Default();
  auto source = gitsource::LibGitSource::Open(options.git, env);
  if (!source.ok()) return fail(source.status());
  gitsource::StatusWriterConfig config;
  config.branch = options.status_branch;
  config.read_limits = gitsource::StatusReadLimitsFor(options.git.snapshot_limits.max_files);
  auto writer = gitsource::GitStatusWriter::Create(**source, config, env);
  if (!writer.ok()) return fail(writer.status());
  std::string last;
  do {
    auto statuses = ReadStatuses(**writer, options, err);
    if (!statuses.ok()) return fail(statuses.status());
    // --watch prints only what changed; the table's AGE column alone is no change.
    const std::string shown = Render(options, *statuses, env.Now());
    const std::string compared =
        options.output == "text"
            ? core::RenderStatusReport(Listed(*statuses), core::ReportFormat::kJson)
            : shown;
    if (compared != last) out << shown << std::flush;
    last = compared;
  } while (options.watch && env.SleepFor(options.watch_interval, {}));
  return 0;
}

}  // namespace tr::reconciler
