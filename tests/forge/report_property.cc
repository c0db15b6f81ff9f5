#include "tests/forge/report_property.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include "fmt/format.h"
#include "reconciler/clients/forge/forge_client.h"
#include "reconciler/features/pull_requests/pull_request_flow.h"
#include "tests/forge/flow_doubles.h"
#include "tests/support/fake_forge.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler::pull_requests::report_property {
namespace {

using core::ClusterPhase;
using forge::HttpForgeClient;
using forge_test::FakeForge;

constexpr char kToken[] = "ghp_reportPropertyTokenNeverLogged";
const std::vector<std::string> kClusters = {"alpha", "beta", "gamma"};

// One reporter process: its forge client, comments, flow, and the store it records through.
struct Reporter {
  Reporter(const FakeForge& fake, NoPreviews& git, SharedBranch& branch, Env& env)
      : client(UnpacedClient(fake, kToken)),
        comments(*client, std::chrono::milliseconds(0), env),
        flow(git, git, *client, comments, env, Options()),
        store(branch, flow) {}

  static PullRequestFlowOptions Options() {
    PullRequestFlowOptions options;
    options.dialect = forge::FindApiDialect("github");
    return options;
  }
  bool Idle() { return flow.Idle() && comments.Idle(); }

  std::unique_ptr<HttpForgeClient> client;
  PullRequestComments comments;
  PullRequestFlow flow;
  ReportingStatusStore store;
};

enum class Truth { kPending, kApplied, kFailed, kSuperseded };

// A merged pull request and what the recorded history says happened to its change.
struct Change {
  int64_t pull_request = 0;
  std::string commit;
  std::set<std::string> scope;
  std::map<std::string, Truth> clusters;  // per cluster in scope
  std::optional<size_t> superseded_by;    // the first change that superseded one of them
  // Pending at a reporter's restart while no record named its commit: the new reporter cannot
  // know of it (docs/pull-requests.md), so it may stay pending.
  bool orphaned = false;

  Truth Outcome() const {
    bool pending = false, superseded = false;
    for (const auto& [cluster, truth] : clusters) {
      if (truth == Truth::kFailed) return Truth::kFailed;
      pending = pending || truth == Truth::kPending;
      superseded = superseded || truth == Truth::kSuperseded;
    }
    return pending ? Truth::kPending : superseded ? Truth::kSuperseded : Truth::kApplied;
  }
};

struct ClusterModel {
  ClusterPhase phase = ClusterPhase::kReady;
  std::string attempted;
  std::string applied;
};

std::string Short(const std::string& commit) { return commit.substr(0, 12); }

class Property {
 public:
  explicit Property(const PropertyRun& run) : run_(run), rng_(run.seed) {}

  PropertyResult Run() {
    const std::string first = Commit(0);
    for (const std::string& name : kClusters) model_[name] = {ClusterPhase::kReady, first, first};
    for (const std::string& name : kClusters) (void)branch_.Record(Status(name), {});
    StartReporter();
    for (int step = 0; step < run_.steps && result_.violations.empty(); ++step) {
      const int dice = Roll(100);
      if (dice < 35) {
        Merge();
      } else if (dice < 75) {
        Finish();
      } else if (dice < 85) {
        Restart();
      } else {
        Repeat();
      }
      if (!Settle()) break;
      CheckReports(false);
    }
    // The end: every rollout left running finishes, then the reports are judged.
    for (const std::string& name : kClusters) {
      while (model_[name].phase == ClusterPhase::kUpgradingTalos && result_.violations.empty()) {
        Finish(name);
        if (!Settle()) break;
        CheckReports(false);
      }
    }
    if (result_.violations.empty()) CheckReports(true);
    reporter_.reset();
    return std::move(result_);
  }

 private:
  int Roll(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  std::string Commit(size_t k) const { return fmt::format("{:012x}{:028x}", 0xabc000 + k, k); }

  core::ClusterStatus Status(const std::string& name) {
    const ClusterModel& m = model_.at(name);
    core::ClusterStatus s;
    s.cluster = name;
    s.phase = m.phase;
    s.message = fmt::format("{} on {}", core::ClusterPhaseName(m.phase), Short(m.attempted));
    s.desired_commit_attempted = m.attempted;
    s.desired_commit_applied = m.applied;
    return s;
  }
  void Record(const std::string& name) {
    if (!reporter_->store.Record(Status(name), {}).ok()) Violation("a record failed");
  }
  void StartReporter() {
    reporter_ = std::make_unique<Reporter>(fake_, git_, branch_, env_);
    (void)reporter_->store.LoadAll({});  // what the daemon does at its start
  }
  bool Settle() {
    // Its two threads (the flow's and the comment writer's) wait again, with nothing left.
    if (env_.RunTimersUntil(2, [&] { return reporter_->Idle(); })) return true;
    Violation("the reporter did not settle");
    return false;
  }
  void Violation(const std::string& what) {
    result_.violations.push_back(
        fmt::format("seed {}: {}\nsteps:\n{}", run_.seed, what, result_.trace));
  }

  std::set<std::string> RandomScope() {
    if (!changes_.empty() && Roll(100) < 30) {  // a revert: the clusters of an earlier change
      return changes_[static_cast<size_t>(Roll(static_cast<int>(changes_.size())))].scope;
    }
    std::set<std::string> scope;
    while (scope.empty()) {
      for (const std::string& name : kClusters) {
        if (Roll(2) == 0) scope.insert(name);
      }
    }
    return scope;
  }

  void Merge() {
    Change change;
    change.pull_request = 100 + static_cast<int64_t>(changes_.size());
    change.commit = Commit(changes_.size() + 1);
    change.scope = RandomScope();
    std::string names;
    for (const std::string& name : change.scope) {
      change.clusters[name] = Truth::kPending;
      names += (names.empty() ? "" : " ") + name;
    }
    // The plan comment, with the hidden scope line a plan carries.
    fake_.AddForeignComment(
        change.pull_request,
        fmt::format("{}\n<!-- talos-reconciler:changes {} -->\n## Plan for "
                    "{}\n\nplan of #{}",
                    kCommentMarker, names, Short(change.commit), change.pull_request));
    fake_.SetMergedPull(change.commit, change.pull_request);
    const bool webhook = Roll(100) < 75;
    result_.trace += fmt::format("merge #{} {} changing [{}]{}\n", change.pull_request,
                                 Short(change.commit), names, webhook ? "" : " (webhook lost)");
    if (webhook) {
      forge::WebhookEvent event;
      event.forge = "github";
      event.kind = forge::WebhookKind::kPullRequest;
      event.number = change.pull_request;
      event.action = forge::PullRequestAction::kMerged;
      event.merge_commit = change.commit;
      event.base_branch = "main";
      reporter_->flow.PullRequestChanged(event);
    }
    const size_t index = changes_.size();
    for (Change& earlier : changes_) {
      for (auto& [name, truth] : earlier.clusters) {
        if (truth != Truth::kPending || !change.scope.contains(name)) continue;
        truth = Truth::kSuperseded;
        if (!earlier.superseded_by) earlier.superseded_by = index;
      }
    }
    changes_.push_back(std::move(change));
    for (auto& [name, m] : model_) {
      m.attempted = changes_.back().commit;
      if (changes_.back().scope.contains(name)) {
        m.phase = ClusterPhase::kUpgradingTalos;
      } else if (m.phase == ClusterPhase::kReady) {
        m.applied = m.attempted;  // nothing to do for it: Ready on the new commit at once
      }
    }
    std::vector<std::string> order = kClusters;
    std::shuffle(order.begin(), order.end(), rng_);
    for (const std::string& name : order) Record(name);
    ++result_.merges;
  }

  void Finish() {
    std::vector<std::string> busy;
    for (const auto& [name, m] : model_) {
      if (m.phase == ClusterPhase::kUpgradingTalos) busy.push_back(name);
    }
    if (busy.empty()) return Repeat();
    Finish(busy[static_cast<size_t>(Roll(static_cast<int>(busy.size())))]);
  }
  void Finish(const std::string& name) {
    ClusterModel& m = model_.at(name);
    const bool failed = Roll(100) < 20;
    m.phase = failed ? ClusterPhase::kUpgradeFailed : ClusterPhase::kReady;
    if (!failed) m.applied = m.attempted;
    result_.trace +=
        fmt::format("{} {} on {}\n", name, failed ? "failed" : "Ready", Short(m.attempted));
    for (Change& change : changes_) {
      auto it = change.clusters.find(name);
      if (it != change.clusters.end() && it->second == Truth::kPending) {
        it->second = failed ? Truth::kFailed : Truth::kApplied;
      }
    }
    Record(name);
  }

  void Restart() {
    result_.trace += "reporter restarted\n";
    reporter_.reset();
    std::set<std::string> named;
    for (const auto& [name, m] : model_) named.insert({m.attempted, m.applied});
    for (Change& change : changes_) {
      if (change.Outcome() == Truth::kPending && !named.contains(change.commit)) {
        change.orphaned = true;
      }
    }
    StartReporter();
    ++result_.restarts;
  }

  void Repeat() {
    const std::string& name = kClusters[static_cast<size_t>(Roll(3))];
    result_.trace += fmt::format("{} recorded again\n", name);
    Record(name);
  }

  static std::string StateOf(Truth truth) {
    switch (truth) {
      case Truth::kPending:
        return "pending";
      case Truth::kFailed:
        return "failure";
      case Truth::kApplied:
      case Truth::kSuperseded:
        return "success";
    }
    return "?";
  }
  std::string Words(const Change& change) const {
    switch (change.Outcome()) {
      case Truth::kPending:
        return "in progress";
      case Truth::kFailed:
        return "failed";
      case Truth::kApplied:
        return "succeeded";
      case Truth::kSuperseded:
        return fmt::format("superseded by #{}", changes_[*change.superseded_by].pull_request);
    }
    return "?";
  }
  std::string Body(int64_t pull_request) {
    std::vector<forge_test::FakeComment> comments = fake_.Comments(pull_request);
    return comments.empty() ? "(no comment)" : comments.back().body;
  }
  std::string Heading(int64_t pull_request) {
    for (const forge_test::FakeComment& c : fake_.Comments(pull_request)) {
      const size_t at = c.body.find("## Rollout of ");
      if (at != std::string::npos) return c.body.substr(at, c.body.find('\n', at) - at);
    }
    return "";
  }

  // The rollout states sent for `change`: no state may follow a final one but itself.
  std::vector<std::string> States(const Change& change) {
    std::vector<std::string> states;
    for (const forge_test::FakeStatus& s : fake_.Statuses(change.commit)) {
      if (s.context != kRolloutContext) continue;
      if (!states.empty() && states.back() != "pending" && s.state != states.back()) {
        Violation(fmt::format("#{}: its rollout status went from {} to {}", change.pull_request,
                              states.back(), s.state));
      }
      states.push_back(s.state);
    }
    return states;
  }

  void CheckReports(bool at_end) {
    for (const Change& change : changes_) {
      const std::vector<std::string> states = States(change);
      const std::string heading = Heading(change.pull_request);
      const bool final = heading.find(": in progress") == std::string::npos && !heading.empty();
      auto& seen = headings_[change.pull_request];
      if (!seen.empty() && seen.find(": in progress") == std::string::npos && heading != seen) {
        Violation(fmt::format("#{}: its final comment changed from \"{}\" to \"{}\"",
                              change.pull_request, seen, heading));
      }
      seen = heading;
      const std::string want_heading =
          fmt::format("## Rollout of {}: {}", Short(change.commit), Words(change));
      if (final && heading != want_heading) {
        Violation(fmt::format("#{}: the comment says \"{}\", the history \"{}\"\n{}",
                              change.pull_request, heading, want_heading,
                              Body(change.pull_request)));
      }
      if (!states.empty() && states.back() != "pending" &&
          states.back() != StateOf(change.Outcome())) {
        Violation(fmt::format("#{}: its rollout status is {}, the history says {}",
                              change.pull_request, states.back(), StateOf(change.Outcome())));
      }
      if (!at_end || (change.orphaned && !final)) continue;
      if (states.empty() || states.back() != StateOf(change.Outcome())) {
        Violation(fmt::format("#{}: at the end its rollout status is {}, the history says {}",
                              change.pull_request, states.empty() ? "none" : states.back(),
                              StateOf(change.Outcome())));
      }
      if (heading != want_heading) {
        Violation(fmt::format("#{}: at the end the comment says \"{}\", the history \"{}\"",
                              change.pull_request, heading, want_heading));
      }
    }
  }

  const PropertyRun run_;
  std::mt19937_64 rng_;
  FakeForge fake_{"github", "acme/fleet", kToken};
  NoPreviews git_;
  SharedBranch branch_;
  test_support::SimulatedEnv env_;
  std::unique_ptr<Reporter> reporter_;
  std::map<std::string, ClusterModel> model_;
  std::vector<Change> changes_;
  std::map<int64_t, std::string> headings_;
  PropertyResult result_;
};

}  // namespace

PropertyResult RunReportProperty(const PropertyRun& run) { return Property(run).Run(); }

}  // namespace tr::reconciler::pull_requests::report_property
