// The plan engine: a checkout of a profile repository read and planned against a fleet observed
// from a file or live, as `plan` prints it, and a pull request's plan (PreviewPlan) for the
// pull-request flow and proposals. `validate` is beside the CLI
// (reconciler/app/offline_commands.h).
//
// Each call reads the directory once and writes only to the given streams. Thread-compatible.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/env.h"
#include "core/observed_decode.h"
#include "core/profile_set.h"
#include "core/status_types.h"
#include "reconciler/clients/factory/factory_installers.h"
#include "reconciler/clients/factory/image_factory.h"
#include "reconciler/clients/talos_credentials.h"

namespace tr::reconciler {

// Exit codes shared by the offline commands (`validate`, `plan`, `propose --dry-run`).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;  // an invalid profile, or unreadable input
inline constexpr int kExitBlocked = 2;  // `plan`: every profile is valid, but a plan is blocked

enum class PlanFormat { kText, kMarkdown, kJson, kYaml };

struct PlanOptions {
  std::filesystem::path dir = ".";
  std::filesystem::path observed_file;  // the observed-state YAML file, or
  PlanFormat format = PlanFormat::kText;
  std::filesystem::path credentials_dir;  // observe live: <dir>/<credentials>/talosconfig
  std::string self_node;                  // live: the node this process runs on
  // A checkout of the status branch: the status/<cluster>.yaml files there add each health
  // check's last answer and where spec.promotion stands to the plan's gates. Empty: none.
  std::filesystem::path status_dir;
  // Observe live through one talosconfig instead: the context named by spec.credentials.
  std::filesystem::path talosconfig;
  // As the daemon's --kubernetes-upgrade-mode: false ("off") marks Kubernetes steps, and every
  // step after one, as not run by the daemon.
  bool kubernetes_upgrades = true;
  int shards = 0;  // as `run --shards`: spec.shard must be below it (0: not checked)
  // Every Image Factory asked for a schematic's ID and extensions, as `run`'s --image-factory*:
  // `origin` is the factory of profiles (and reconciler.yaml) that name none; empty: none.
  factory::ImageFactoryOptions image_factory{};
};

// Prints the plan of every cluster, observed from the file or, with `credentials_dir`, live
// through the Talos and Kubernetes APIs, with what the daemon would do with each step
// (core/plan_outlook.h); JSON and YAML in core/cluster_report.h's shape. kExitOk when every cluster
// is planned or up to date, kExitBlocked when a plan is blocked, kExitInvalid when a profile or the
// input (a status file included) is invalid. A profile naming a schematic is first resolved at
// its factory (the IDs kept in memory only); one that cannot be is planned as blocked, why.
// `env`: the time the plan is made at, and the live clients' (the real one: their IO is real).
int RunPlan(const PlanOptions& options, Env& env, std::ostream& out, std::ostream& err);

// The profiles of the checkout at `dir`, as `plan` and `validate` read them; nullopt after
// printing why.
std::optional<core::ProfileSet> LoadCheckout(const std::filesystem::path& dir, int shards,
                                             std::ostream& err);

// The fleet as `plan` observes it: from `options.observed_file`, or live with
// `options.credentials_dir` or `options.talosconfig`. A cluster that cannot be observed live
// is left out, with why in `unobserved`. nullopt after printing why the file is unreadable.
std::optional<core::ObservedFleet> ObserveFleet(const core::ProfileSet& set,
                                                const PlanOptions& options, Env& env,
                                                std::map<std::string, std::string>& unobserved,
                                                std::ostream& err);

// A pull request's plan: its profiles planned against the live fleet.
struct PlanPreview {
  std::string markdown;                 // the plan of every changed cluster
  int exit_code = kExitOk;              // as RunPlan's, over the changed clusters
  std::vector<std::string> changed;     // the clusters whose profile the proposal changes
  std::vector<std::string> unobserved;  // "<cluster>: <why>" for those not observed
  // ResourceExhausted naming the budget when the change needs more than a preview may spend
  // (factory::kPreviewFactoryRequests); nothing was asked or observed, `markdown` says why.
  absl::Status refused;
};

// Plans the clusters that `proposed` (a pull request's files: untrusted, only read) changes
// relative to `trusted` (the watched branch's files), through the same planner and markdown as
// `plan`. Every cluster is observed live with its endpoints and credentials from `trusted`,
// never from the proposal, so a pull request cannot point the reconciler anywhere; a cluster
// only the proposal has is planned as not observed. A change to reconciler.yaml changes every
// cluster; a proposal that changes no profile has nothing in `changed`. `shards` as
// ValidateOptions::shards. With `installers` (the daemon's), a proposed profile's schematic is
// resolved at the factory `trusted` names for its cluster (its profile's spec.talos.factory,
// else its reconciler.yaml's imageFactory, else the daemon's --image-factory), never at one the
// proposal names, within a budget of factory requests (PreviewInstallers: the IDs the daemon
// knows cost none, new ones are kept for this preview only); without, a schematic profile is
// planned as blocked. `env` as RunPlan's. The Talos releases in
// `broken` (the daemon's release list: those its Image Factory marks broken) block a plan to
// them, as in the daemon. `history` (the daemon's recorded statuses, null: none) gives the drain
// forecast the durations of the clusters' earlier rollouts.
PlanPreview PreviewPlan(const std::vector<core::SourceFile>& proposed,
                        const std::vector<core::SourceFile>& trusted,
                        const TalosCredentials& credentials, const std::string& self_node, Env& env,
                        bool kubernetes_upgrades = true, int shards = 0,
                        factory::FactoryInstallers* installers = nullptr,
                        const std::vector<core::Version>& broken = {},
                        const std::map<std::string, core::ClusterStatus>* history = nullptr);

}  // namespace tr::reconciler
