#include "reconciler/cli.h"

#include <iostream>
#include <map>

#include "CLI/CLI.hpp"
#include "reconciler/daemon.h"
#include "reconciler/daemon_config.h"
#include "reconciler/k8s_upgrade/upgrade_k8s_command.h"
#include "reconciler/offline_commands.h"
#include "reconciler/status_command.h"

namespace tr::reconciler {
namespace {

void AddValidate(CLI::App& app, ValidateOptions& options, std::function<int()>& run) {
  CLI::App* cmd =
      app.add_subcommand("validate", "Check every profile in a checkout of a profile repository");
  cmd->add_option("dir", options.dir, "The repository checkout (default: .)");
  const std::map<std::string, ValidateFormat> formats{{"text", ValidateFormat::kText},
                                                      {"github", ValidateFormat::kGithub}};
  cmd->add_option("--format", options.format, "text, or github for Actions annotations")
      ->transform(CLI::CheckedTransformer(formats));
  cmd->callback([&] { run = [&] { return RunValidate(options, std::cout, std::cerr); }; });
}

void AddPlan(CLI::App& app, PlanOptions& options, std::function<int()>& run) {
  CLI::App* cmd = app.add_subcommand("plan", "Print the upgrade plan of every cluster");
  cmd->add_option("dir", options.dir, "The repository checkout (default: .)");
  CLI::Option* observed = cmd->add_option("--observed", options.observed_file,
                                          "YAML file with what the nodes run (see README)");
  CLI::Option* live = cmd->add_option("--credentials-dir", options.credentials_dir,
                                      "Observe live: <dir>/<credentials>/talosconfig per profile");
  observed->excludes(live);
  cmd->add_option("--node-name", options.self_node, "Live: the node this process runs on");
  cmd->add_option("--status", options.status_dir,
                  "A checkout of the status branch: show the health checks' last answers and "
                  "where promotion stands");
  cmd->callback([&, observed, live] {
    if (observed->count() + live->count() == 0) {
      throw CLI::RequiredError("--observed or --credentials-dir");
    }
  });
  const std::map<std::string, PlanFormat> formats{{"text", PlanFormat::kText},
                                                  {"markdown", PlanFormat::kMarkdown},
                                                  {"json", PlanFormat::kJson}};
  cmd->add_option("--format", options.format, "text, markdown or json")
      ->transform(CLI::CheckedTransformer(formats));
  cmd->parse_complete_callback(
      [&] { run = [&] { return RunPlan(options, std::cout, std::cerr); }; });
}

CLI::App* AddRun(CLI::App& app, DaemonConfig& config, std::function<int()>& run) {
  CLI::App* cmd = app.add_subcommand(
      "run", "Keep every cluster of the repository at its desired Talos version");
  AddDaemonFlags(*cmd, config);
  cmd->callback([&] {
    run = [&] {
      if (absl::Status s = FinishDaemonConfig(config); !s.ok()) {
        std::cerr << "talos-reconciler run: " << s.message() << "\n";
        return kExitInvalid;
      }
      return RunDaemon(config);
    };
  });
  return cmd;
}

void AddStatus(CLI::App& app, StatusCommandOptions& options, std::function<int()>& run) {
  CLI::App* cmd =
      app.add_subcommand("status", "Print every cluster's status from the status branch");
  cmd->add_option("--repo", options.git.remote.url, "Profile repository URL")
      ->required()
      ->envname("TALOS_RECONCILER_REPO");
  cmd->add_option("--status-branch", options.status_branch, "The status branch")
      ->capture_default_str();
  cmd->add_option("--state-dir", options.git.state_dir, "Directory for the Git mirror")
      ->required()
      ->envname("TALOS_RECONCILER_STATE_DIR");
  cmd->add_option("--git-token-file", options.git.remote.auth.token_file, "HTTPS token file");
  cmd->add_option("--git-ssh-key", options.git.remote.auth.ssh_key_file, "SSH private key");
  cmd->add_option("--git-known-hosts", options.git.remote.auth.known_hosts_file,
                  "SSH known_hosts file");
  cmd->add_flag("--json", options.json, "Print JSON");
  cmd->callback([&] { run = [&] { return RunStatus(options, std::cout, std::cerr); }; });
}

void AddUpgradeK8s(CLI::App& app, k8s_upgrade::UpgradeK8sOptions& options,
                   std::function<int()>& run) {
  CLI::App* cmd = app.add_subcommand(
      "upgrade-k8s", "Upgrade one cluster's Kubernetes by one minor version (see README)");
  cmd->add_option("--cluster", options.cluster, "The cluster (its profile's name)")->required();
  cmd->add_option("--to", options.to, "The Kubernetes version to reach, e.g. 1.35.0")->required();
  CLI::Option* profile =
      cmd->add_option("--profile", options.profile_file, "The cluster's profile file");
  CLI::Option* repo = cmd->add_option("--repo", options.repo_dir,
                                      "A checkout of the profile repository (default: .)");
  profile->excludes(repo);
  cmd->add_option("--credentials-dir", options.credentials_dir,
                  "<dir>/<credentials>/talosconfig per profile")
      ->required()
      ->envname("TALOS_RECONCILER_CREDENTIALS_DIR");
  cmd->add_flag("!--no-pre-pull", options.pre_pull, "Do not pull the new images beforehand");
  auto millis = [cmd](const char* name, std::chrono::milliseconds& into, const char* help) {
    cmd->add_option_function<int64_t>(
           name, [&into](int64_t ms) { into = std::chrono::milliseconds(ms); }, help)
        ->check(CLI::PositiveNumber);
  };
  millis("--poll-interval-ms", options.poll_interval, "How often waits look (default 1000)");
  millis("--static-pod-timeout-ms", options.static_pod_timeout,
         "How long a static pod may take to be Ready (default 300000)");
  millis("--kubelet-timeout-ms", options.kubelet_timeout,
         "How long a kubelet may take to come back (default 180000)");
  cmd->callback([&, repo, profile] {
    if (profile->count() == 0 && repo->count() == 0) options.repo_dir = ".";
    run = [&] { return k8s_upgrade::RunUpgradeK8s(options, std::cout, std::cerr); };
  });
}

}  // namespace

int RunCli(int argc, char** argv) {
  CLI::App app{"talos-reconciler: keeps Talos clusters at the versions written in Git"};
  app.require_subcommand(1);
  ValidateOptions validate;
  PlanOptions plan;
  DaemonConfig daemon;
  StatusCommandOptions status;
  k8s_upgrade::UpgradeK8sOptions upgrade_k8s;
  std::function<int()> run;
  AddValidate(app, validate, run);
  AddPlan(app, plan, run);
  CLI::App* run_cmd = AddRun(app, daemon, run);
  AddStatus(app, status, run);
  AddUpgradeK8s(app, upgrade_k8s, run);
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args.front() == "run") {
    if (absl::Status s = ApplyConfigFile(args, *run_cmd); !s.ok()) {
      std::cerr << "talos-reconciler run: " << s.message() << "\n";
      return kExitInvalid;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return run ? run() : kExitInvalid;
}

}  // namespace tr::reconciler
