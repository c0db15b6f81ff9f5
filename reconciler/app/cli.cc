#include "reconciler/app/cli.h"

#include <grpc/support/log.h>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <map>
#include <set>
#include <string_view>

#include "CLI/CLI.hpp"
#include "base/env.h"
#include "core/api_version.h"
#include "core/text.h"
#include "core/timestamp.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "reconciler/app/adopt_command.h"
#include "reconciler/app/completion.h"
#include "reconciler/app/daemon/daemon.h"
#include "reconciler/app/daemon/daemon_config.h"
#include "reconciler/app/offline_commands.h"
#include "reconciler/app/operator_verbs.h"
#include "reconciler/app/status_command.h"
#include "reconciler/clients/factory/factory_flags.h"
#include "reconciler/clients/talos/talosconfig.h"
#include "reconciler/features/plan/plan_engine.h"
#include "reconciler/features/proposals/propose_command.h"
#include "reconciler/operations/k8s_upgrade/upgrade_k8s_command.h"
#include "reconciler/runtime/cli_error.h"
#include "reconciler/runtime/logging.h"
#include "reconciler/runtime/version.h"

namespace tr::reconciler {
namespace {

// CLI11 lists an option's `Needs:` and `Excludes:` in the order of the options' addresses, which
// differ from build to build (the sanitizers' allocator, say): sorted by name here, so that
// every build prints the same --help, and docs/reference/ matches them all.
class SortedHelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* opt) const override {
    std::string text = CLI::Formatter::make_option_opts(opt);
    if (!opt->get_option_text().empty()) return text;  // then CLI11 lists neither
    const size_t needs = text.find(" " + get_label("Needs") + ":");
    const size_t excludes = text.find(" " + get_label("Excludes") + ":");
    text.resize(std::min(needs, excludes) == std::string::npos ? text.size()
                                                               : std::min(needs, excludes));
    text += Sorted("Needs", opt->get_needs());
    text += Sorted("Excludes", opt->get_excludes());
    return text;
  }

 private:
  std::string Sorted(const std::string& label, const std::set<CLI::Option*>& options) const {
    if (options.empty()) return "";
    std::vector<std::string> names;
    for (const CLI::Option* o : options) names.push_back(o->get_name());
    std::sort(names.begin(), names.end());
    return fmt::format(" {}: {}", get_label(label), fmt::join(names, " "));
  }
};

// `-o text|json|yaml|markdown`, the one output flag of `plan` and `status`, and the flag each
// had before it (plan's --format VALUE, status' --json), hidden and warned about on stderr.
void AddOutputFlag(CLI::App& cmd, std::string& output, const std::string& deprecated) {
  cmd.add_option("-o,--output", output,
                 "text, json, yaml (both in the shape docs/validate-and-plan.md documents) or "
                 "markdown")
      ->check(CLI::IsMember({"text", "json", "yaml", "markdown"}))
      ->option_text("text|json|yaml|markdown");
  auto warn = [deprecated] {
    std::cerr << "warning: " << deprecated << " is deprecated; use -o\n";
  };
  if (deprecated == "--json") {
    cmd.add_flag_callback(
           deprecated, [&output, warn] { output = "json", warn(); }, "")
        ->group("");
    return;
  }
  cmd.add_option_function<std::string>(
         deprecated, [&output, warn](const std::string& value) { output = value, warn(); }, "")
      ->check(CLI::IsMember({"text", "json", "yaml", "markdown"}))
      ->group("");
}

// --shards of validate and plan: spec.shard is checked against the daemon's shard count.
void AddShardsCheck(CLI::App* cmd, int& shards) {
  cmd->add_option("--shards", shards,
                  "As `run --shards`: each profile's spec.shard must be below it (default: "
                  "not checked)")
      ->check(CLI::Range(1, 1024));
}

void AddValidate(CLI::App& app, ValidateOptions& options, std::function<int()>& run) {
  CLI::App* cmd =
      app.add_subcommand("validate", "Check every profile in a checkout of a profile repository");
  cmd->footer(
      "Examples:\n"
      "  talos-reconciler validate                 # the checkout in the current directory\n"
      "  talos-reconciler validate fleet -o github # annotations for a GitHub Actions job");
  cmd->add_option("dir", options.dir, "The repository checkout (default: .)");
  const std::map<std::string, ValidateFormat> formats{{"text", ValidateFormat::kText},
                                                      {"github", ValidateFormat::kGithub}};
  // Checked by name, then mapped: CLI11's CheckedTransformer would name the enum's numbers.
  cmd->add_option_function<std::string>(
         "-o,--output,--format",
         [&options, formats](const std::string& name) { options.format = formats.at(name); },
         "text, or github for Actions annotations")
      ->check(CLI::IsMember({"text", "github"}))
      ->option_text("text|github");
  AddShardsCheck(cmd, options.shards);
  cmd->callback([&] { run = [&] { return RunValidate(options, std::cout, std::cerr); }; });
}

// How `plan` and `propose` see the fleet: exactly one of a file, a credentials directory or
// one talosconfig; with none of them, the talosconfig talosctl would read ($TALOSCONFIG, else
// ~/.talos/config).
struct ObserveFlags {
  CLI::Option* observed = nullptr;
  CLI::Option* live = nullptr;
  CLI::Option* talosconfig = nullptr;

  void Require(PlanOptions& options) const {
    if (observed->count() + live->count() + talosconfig->count() > 0) return;
    options.talosconfig = talos::DefaultTalosconfigPath();
    if (options.talosconfig.empty()) {
      throw CLI::RequiredError(
          "--observed, --credentials-dir or --talosconfig (no $TALOSCONFIG, no ~/.talos/config)");
    }
  }
};

ObserveFlags AddObserveFlags(CLI::App* cmd, PlanOptions& options) {
  ObserveFlags flags;
  flags.observed = cmd->add_option("--observed", options.observed_file,
                                   "YAML file with what the nodes run (see docs/profiles.md)");
  flags.live = cmd->add_option("--credentials-dir", options.credentials_dir,
                               "Observe live: <dir>/<credentials>/talosconfig per profile");
  flags.talosconfig =
      cmd->add_option("--talosconfig", options.talosconfig,
                      "Observe live: one talosconfig, the context named by spec.credentials "
                      "(default, without --observed or --credentials-dir: $TALOSCONFIG, else "
                      "~/.talos/config, as talosctl)");
  flags.observed->excludes(flags.live);
  flags.observed->excludes(flags.talosconfig);
  flags.live->excludes(flags.talosconfig);
  cmd->add_option("--node-name", options.self_node, "Live: the node this process runs on");
  return flags;
}

void AddPlan(CLI::App& app, PlanOptions& options, std::function<int()>& run) {
  CLI::App* cmd = app.add_subcommand("plan", "Print the upgrade plan of every cluster");
  cmd->footer(
      "Examples:\n"
      "  talos-reconciler plan fleet --observed observed.yaml\n"
      "  talos-reconciler plan fleet --credentials-dir /etc/talos-reconciler/talos -o markdown\n"
      "  talos-reconciler plan fleet --observed observed.yaml -o json | jq '.clusters[].phase'");
  cmd->add_option("dir", options.dir, "The repository checkout (default: .)");
  AddShardsCheck(cmd, options.shards);
  const ObserveFlags observe = AddObserveFlags(cmd, options);
  cmd->add_option("--status", options.status_dir,
                  "A checkout of the status branch: show the health checks' last answers, "
                  "where promotion stands and the drain forecast's durations");
  auto output = std::make_shared<std::string>("text");
  AddOutputFlag(*cmd, *output, "--format");
  cmd->add_option_function<std::string>(
         "--kubernetes-upgrade-mode",
         [&](const std::string& mode) { options.kubernetes_upgrades = mode == "inprocess"; },
         "As the daemon's: off marks Kubernetes steps as not run by the daemon")
      ->check(CLI::IsMember({"inprocess", "off"}))
      ->envname("TALOS_RECONCILER_KUBERNETES_UPGRADE_MODE")
      ->option_text("inprocess|off");
  auto image_factory = std::make_shared<factory::ImageFactoryFlags>();
  image_factory->AddClientFlags(
      *cmd,
      "http(s)://host[:port] of the Image Factory of profiles whose spec.talos.schematic names "
      "none (and reconciler.yaml no imageFactory); without one, such a profile plans as "
      "blocked (default: none)");
  cmd->callback([&, observe, output, image_factory] {
    observe.Require(options);
    absl::StatusOr<factory::ImageFactoryOptions> factory_options = image_factory->Finish();
    if (!factory_options.ok()) {
      throw CLI::ValidationError(std::string(factory_options.status().message()));
    }
    options.image_factory = *std::move(factory_options);
    const std::map<std::string, PlanFormat> formats{{"text", PlanFormat::kText},
                                                    {"markdown", PlanFormat::kMarkdown},
                                                    {"json", PlanFormat::kJson},
                                                    {"yaml", PlanFormat::kYaml}};
    options.format = formats.at(*output);
  });
  cmd->parse_complete_callback(
      [&] { run = [&] { return RunPlan(options, Env::Default(), std::cout, std::cerr); }; });
}

void AddPropose(CLI::App& app, proposals::ProposeOptions& options, std::function<int()>& run) {
  CLI::App* cmd = app.add_subcommand(
      "propose", "Print the release proposals the daemon would open as pull requests now");
  cmd->footer(
      "Proposals follow each profile's `updates` policy (docs/proposals.md); `run` makes them.\n"
      "Examples:\n"
      "  talos-reconciler propose fleet --dry-run --observed observed.yaml\n"
      "  talos-reconciler propose fleet --dry-run --credentials-dir /etc/talos-reconciler/talos "
      "-o json");
  cmd->add_option("dir", options.input.dir, "The repository checkout (default: .)");
  cmd->add_flag("--dry-run", options.dry_run,
                "Print the proposals only (required: `run` opens them)")
      ->required();
  AddShardsCheck(cmd, options.input.shards);
  const ObserveFlags observe = AddObserveFlags(cmd, options.input);
  const std::map<std::string, proposals::ProposeFormat> formats{
      {"text", proposals::ProposeFormat::kText}, {"json", proposals::ProposeFormat::kJson}};
  cmd->add_option_function<std::string>(
         "-o,--output",
         [&options, formats](const std::string& name) { options.format = formats.at(name); },
         "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->option_text("text|json");
  cmd->callback([&, observe] {
    observe.Require(options.input);
    run = [&] { return proposals::RunPropose(options, Env::Default(), std::cout, std::cerr); };
  });
}

// `origins` and `args` say where a bad value came from (flag, environment, config file line).
CLI::App* AddRun(CLI::App& app, DaemonConfig& config, const SettingOrigins& origins,
                 const std::vector<std::string>& args, std::function<int()>& run) {
  CLI::App* cmd = app.add_subcommand(
      "run", "Keep every cluster of the repository at its desired Talos version");
  cmd->footer(
      "Example:\n"
      "  talos-reconciler run --repo https://git.example.com/fleet.git \\\n"
      "      --git-token-file /etc/talos-reconciler/git/token \\\n"
      "      --credentials-dir /etc/talos-reconciler/talos --state-dir /var/lib/talos-reconciler\n"
      "Every flag can also be set as TALOS_RECONCILER_<FLAG> or in --config FILE.");
  AddDaemonFlags(*cmd, config);
  cmd->callback([&] {
    run = [&] {
      if (absl::Status s = FinishDaemonConfig(config); !s.ok()) {
        std::cerr << ErrorLine(origins.Annotate(std::string(s.message()), args));
        return kExitInvalid;
      }
      return RunDaemon(config);
    };
  });
  return cmd;
}

void AddStatus(CLI::App& app, StatusCommandOptions& options, std::function<int()>& run) {
  CLI::App* cmd = app.add_subcommand(
      "status", "Print every cluster's status (or one's) from the status branch");
  cmd->footer(
      "Examples:\n"
      "  talos-reconciler status --repo https://git.example.com/fleet.git\n"
      "  talos-reconciler status prod-eu-1 --repo ssh://git@git.example.com/fleet.git \\\n"
      "      --git-ssh-key key --git-known-hosts known_hosts --watch\n"
      "  talos-reconciler status --repo file:///srv/git/fleet.git -o json");
  cmd->add_option("cluster", options.cluster, "Only this cluster");
  AddGitFlags(*cmd, options);
  cmd->add_option("--status-branch", options.status_branch, "The status branch")
      ->capture_default_str();
  cmd->add_option("--state-dir", options.git.state_dir,
                  "Keep the Git mirror here between runs (default: a temporary directory)")
      ->envname("TALOS_RECONCILER_STATE_DIR");
  AddOutputFlag(*cmd, options.output, "--json");
  cmd->add_flag("-w,--watch", options.watch, "Print again whenever a status changes (every 5s)");
  cmd->callback([&] { run = [&] { return RunStatus(options, std::cout, std::cerr); }; });
}

void AddUpgradeK8s(CLI::App& app, k8s_upgrade::UpgradeK8sOptions& options,
                   std::function<int()>& run) {
  CLI::App* cmd = app.add_subcommand(
      "upgrade-k8s", "Upgrade one cluster's Kubernetes by one minor version (see docs/kubernetes-upgrades.md)");
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
  cmd->add_flag_callback(
      "--no-pre-pull", [&options] { options.pre_pull = false; },
      "Do not pull the new images beforehand");
  cmd->add_flag_callback(
      "--manifests-no-prune", [&options] { options.prune_manifests = false; },
      "Keep the objects Talos's manifest inventory lists that left the manifests (as talosctl "
      "upgrade-k8s --manifests-no-prune)");
  auto millis = [cmd](const char* name, std::chrono::milliseconds& into, const char* help) {
    cmd->add_option_function<int64_t>(
           name, [&into](int64_t ms) { into = std::chrono::milliseconds(ms); }, help)
        ->check([](const std::string& text) {
          return !text.empty() && text.find_first_not_of("0123456789") == std::string::npos &&
                         text.find_first_not_of('0') != std::string::npos
                     ? std::string()
                     : "want a number of milliseconds above 0, not " + text;
        })
        ->type_name("MS");
  };
  millis("--poll-interval-ms", options.poll_interval, "How often waits look (default 1000)");
  millis("--static-pod-timeout-ms", options.static_pod_timeout,
         "How long a static pod may take to be Ready (default 300000)");
  millis("--kubelet-timeout-ms", options.kubelet_timeout,
         "How long a kubelet may take to come back (default 180000)");
  millis("--manifests-timeout-ms", options.manifests_timeout,
         "How long the manifests' DaemonSets and Deployments may take to roll out (default "
         "300000)");
  cmd->add_option("--termination-log", options.termination_log,
                  "Also write the last line here (a Job's /dev/termination-log)");
  cmd->footer(
      "Examples:\n"
      "  talos-reconciler upgrade-k8s --cluster prod-eu-1 --to 1.35.0 \\\n"
      "      --profile clusters/prod-eu-1.yaml --credentials-dir /secrets/talos\n"
      "  talos-reconciler upgrade-k8s --cluster staging --to 1.36.3 --repo fleet \\\n"
      "      --credentials-dir /secrets/talos --no-pre-pull");
  cmd->callback([&, repo, profile] {
    if (profile->count() == 0 && repo->count() == 0) options.repo_dir = ".";
    run = [&] {
      return k8s_upgrade::RunUpgradeK8sUntilSignalled(options, Env::Default(), std::cout,
                                                      std::cerr);
    };
  });
}

void AddAdopt(CLI::App& app, AdoptOptions& options, std::function<int()>& run) {
  CLI::App* cmd = app.add_subcommand(
      "adopt", "Print the profile of a running cluster: what its nodes run now");
  cmd->footer(
      "Found through a talosconfig context as talosctl finds one; the profile goes to stdout.\n"
      "`validate` accepts it and `plan` finds nothing to do (docs/getting-started.md).\n"
      "Examples:\n"
      "  talos-reconciler adopt prod --context prod > clusters/prod.yaml\n"
      "  talos-reconciler adopt staging --talosconfig ./talosconfig --context admin@staging");
  cmd->add_option("cluster", options.cluster,
                  "metadata.name, and the file's name (default: the context's name)");
  cmd->add_option("--talosconfig", options.talosconfig,
                  "The talosconfig (default: $TALOSCONFIG, else ~/.talos/config, as talosctl)");
  cmd->add_option("--context", options.context,
                  "Its context, written as spec.credentials (default: its current context)");
  cmd->add_option("--image", options.image,
                  "The installer repository to write, when the nodes' own do not agree (no "
                  "tag)");
  cmd->callback([&] { run = [&] { return RunAdopt(options, std::cout, std::cerr); }; });
}

// pause, resume and retry: one commit in a checkout of the profile repository
// (operator_verbs.h). `what` says what the commit changes and what the daemon does with it.
void AddOperatorVerb(CLI::App& app, const char* verb, const char* description, const char* what,
                     OperatorVerbOptions& options, std::function<int()>& run) {
  CLI::App* cmd = app.add_subcommand(verb, description);
  cmd->footer(fmt::format(
      "{}\nThe commit's author says who, its message why.\n"
      "Example:\n"
      "  talos-reconciler {} prod --reason \"{}\" --push",
      what, verb,
      std::string_view(verb) == "retry" ? "replaced the disk of w-1" : "etcd maintenance, INC-1234"));
  cmd->add_option("cluster", options.cluster, "The cluster (clusters/CLUSTER.yaml)")->required();
  cmd->add_option("--reason", options.reason, "Why: the commit message says it")->required();
  cmd->add_option("--dir", options.dir, "The checkout of the profile repository (default: .)");
  cmd->add_flag("--push", options.push, "Push the commit (git push) once made");
  cmd->callback([&options, &run, verb] {
    options.verb = verb;
    options.retry_token = core::FormatTimestamp(Env::Default().Now());
    run = [&options] { return RunOperatorVerb(options, std::cout, std::cerr); };
  });
}

void AddVersion(CLI::App& app, std::function<int()>& run) {
  CLI::App* cmd = app.add_subcommand("version", "Print the version");
  auto output = std::make_shared<std::string>("text");
  cmd->add_option("-o,--output", *output, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->callback([&run, output] {
    run = [output] {
      if (*output == "json") {
        std::cout << VersionJson().dump() << "\n";
      } else {
        std::cout << VersionText();
      }
      return kExitOk;
    };
  });
}

void AddCompletion(CLI::App& app, std::function<int()>& run) {
  CLI::App* cmd = app.add_subcommand("completion", "Print a shell completion script");
  cmd->footer(
      "Examples:\n"
      "  source <(talos-reconciler completion bash)      # in ~/.bashrc\n"
      "  talos-reconciler completion zsh > \"${fpath[1]}/_talos-reconciler\"\n"
      "  talos-reconciler completion fish | source       # in ~/.config/fish/config.fish");
  auto shell = std::make_shared<std::string>();
  cmd->add_option("shell", *shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->callback([&app, &run, shell] {
    run = [&app, shell] {
      std::cout << *CompletionScript(app, *shell);
      return kExitOk;
    };
  });
}

// "unknown command "stauts" for talos-reconciler; did you mean "status"?" when the first
// argument is neither a flag nor a command. Empty when it is one.
std::string UnknownCommand(const CLI::App& app, const std::vector<std::string>& args) {
  if (args.empty() || args.front().starts_with("-")) return "";
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == args.front()) return "";
    names.push_back(sub->get_name());
  }
  const std::string best = core::ClosestSpelling(
      args.front(), std::vector<std::string_view>(names.begin(), names.end()));
  std::string text = fmt::format("unknown command \"{}\" for talos-reconciler", args.front());
  if (!best.empty()) text += fmt::format("; did you mean \"{}\"?", best);
  return text + "\nRun 'talos-reconciler --help' for the commands.";
}

// The command the arguments chose ("talos-reconciler" when none), and its help's invitation.
const CLI::App& Chosen(const CLI::App& app) {
  const std::vector<CLI::App*> chosen = app.get_subcommands();
  return chosen.empty() ? app : *chosen.front();
}
std::string SeeHelp(const CLI::App& app) {
  const CLI::App& cmd = Chosen(app);
  return &cmd == &app
             ? "Run 'talos-reconciler --help' for the commands."
             : fmt::format("Run 'talos-reconciler {} --help' for its flags.", cmd.get_name());
}

// "unknown flag --obsrved for plan; did you mean --observed?" for the first argument the chosen
// command did not take that looks like a flag, "unexpected argument(s) for plan: b c" for
// arguments that do not; "" when every argument was taken. Hidden flags (the deprecated ones)
// are never suggested; short ones neither (one letter is close to anything).
std::string UnknownArguments(const CLI::App& app) {
  const CLI::App& cmd = Chosen(app);
  const std::string name = &cmd == &app ? "talos-reconciler" : cmd.get_name();
  std::vector<std::string> known;
  for (const CLI::App* owner : {&cmd, &app}) {
    for (const CLI::Option* opt : owner->get_options()) {
      if (opt->get_group().empty()) continue;
      for (const std::string& long_name : opt->get_lnames()) known.push_back(long_name);
    }
  }
  std::vector<std::string> positional;
  for (const std::string& arg : app.remaining(true)) {
    const std::string flag = arg.substr(0, arg.find('='));
    const size_t name_at = flag.find_first_not_of('-');
    if (!arg.starts_with("-") || name_at == std::string::npos) {  // "-", "--", "--=x" too
      positional.push_back(arg);
      continue;
    }
    const std::string bare = flag.substr(name_at);
    const std::string best =
        core::ClosestSpelling(bare, std::vector<std::string_view>(known.begin(), known.end()));
    std::string text = fmt::format("unknown flag {} for {}", flag, name);
    if (!best.empty()) text += fmt::format("; did you mean --{}?", best);
    return text;
  }
  if (positional.empty()) return "";
  return fmt::format("unexpected argument{} for {}: {}", positional.size() > 1 ? "s" : "", name,
                     fmt::join(positional, " "));
}

// CLI11's own message in our style: its first letter in lower case ("A subcommand is required"
// -> "a subcommand is required"), as every other error line.
std::string LowerFirst(std::string text) {
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z') {
    text[0] = static_cast<char>(text[0] - 'A' + 'a');
  }
  return text;
}

// Every required flag the chosen command lacks, named at once (CLI11 stops at the first).
std::string MissingRequired(const CLI::App& app) {
  std::vector<std::string> missing;
  for (const CLI::App* sub : app.get_subcommands()) {
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->get_required() && opt->count() == 0) missing.push_back(opt->get_name());
    }
  }
  if (missing.empty()) return "";
  return fmt::format("required flag{} not set: {}", missing.size() > 1 ? "s" : "",
                     fmt::join(missing, ", "));
}

// gRPC's own lines ("E1123 ssl_transport_security.cc:1501] Handshake failed ...") go to the
// log at debug level, as key=value lines: the call that failed reports its error itself, and a
// `plan` should not print library internals.
void LogGrpc(gpr_log_func_args* args) {
  ModuleLogger("grpc")->debug("source={}:{} message={}", args->file, args->line,
                              LogValue(args->message));
}

}  // namespace

int RunCli(int argc, char** argv) {
  // A peer that hangs up mid-write (a notification receiver, a forge, a Kubernetes API whose
  // handshake a shutdown cuts) must give the writer EPIPE, not kill the process: httplib and
  // OpenSSL write with plain write(). Children get the default back (gitsource/subprocess).
  std::signal(SIGPIPE, SIG_IGN);
  gpr_set_log_function(LogGrpc);
  CLI::App app{"talos-reconciler: keeps Talos clusters at the versions written in Git"};
  app.formatter(std::make_shared<SortedHelpFormatter>());  // before the commands: they copy it
  app.require_subcommand(1);
  ValidateOptions validate;
  PlanOptions plan;
  DaemonConfig daemon;
  StatusCommandOptions status;
  k8s_upgrade::UpgradeK8sOptions upgrade_k8s;
  std::function<int()> run;
  AddValidate(app, validate, run);
  AddPlan(app, plan, run);
  proposals::ProposeOptions propose;
  AddPropose(app, propose, run);
  const std::vector<std::string> args(argv + 1, argv + argc);
  SettingOrigins origins;
  CLI::App* run_cmd = AddRun(app, daemon, origins, args, run);
  AddStatus(app, status, run);
  AddUpgradeK8s(app, upgrade_k8s, run);
  AdoptOptions adopt;
  AddAdopt(app, adopt, run);
  OperatorVerbOptions pause, resume, retry;
  constexpr const char* kPaused =
      "Sets spec.policy.paused in clusters/CLUSTER.yaml and commits it with git.\n"
      "A node in flight is still seen through.";
  AddOperatorVerb(app, "pause", "Pause a cluster in Git: one commit saying who and why", kPaused,
                  pause, run);
  AddOperatorVerb(app, "resume", "Resume a paused cluster in Git: one commit saying who and why",
                  kPaused, resume, run);
  AddOperatorVerb(
      app, "retry", "Retry a failed rollout in Git: one commit saying who and why",
      "Sets the annotation talos-reconciler.dev/retry in clusters/CLUSTER.yaml to the time now\n"
      "and commits it with git. A rollout halted by a failure (UpgradeFailed) starts again\n"
      "where it stopped; a cluster that is not halted is not changed by it.",
      retry, run);
  AddVersion(app, run);
  AddCompletion(app, run);
  app.set_version_flag("--version", VersionLine());
  if (std::string unknown = UnknownCommand(app, args); !unknown.empty()) {
    std::cerr << ErrorLine(unknown);
    return kExitInvalid;
  }
  if (!args.empty() && args.front() == "run") {
    if (absl::Status s = ApplyConfigFile(args, *run_cmd, &origins); !s.ok()) {
      std::cerr << ErrorLine(std::string(s.message()));
      return kExitInvalid;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and --version exit 0; every usage error exits 1, not CLI11's own codes, and says
    // first what was not understood (CLI11 checks required flags before unknown ones).
    if (e.get_exit_code() == 0) return app.exit(e) == 0 ? kExitOk : kExitInvalid;
    std::string message = UnknownArguments(app);
    if (message.empty() && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      message = MissingRequired(app);
      if (message.empty() && app.get_subcommands().empty()) message = "a command is required";
    }
    if (message.empty() && dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
      message = origins.Annotate(e.what(), args);
    }
    if (message.empty()) message = LowerFirst(e.what());
    std::cerr << ErrorLine(message) << SeeHelp(app) << "\n";
    return kExitInvalid;
  }
  return run ? run() : kExitInvalid;
}

}  // namespace tr::reconciler
