#include "reconciler/app/completion.h"

#include <vector>

#include "fmt/format.h"

namespace tr::reconciler {
namespace {

constexpr const char* kProgram = "talos-reconciler";

std::vector<const CLI::App*> Commands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

// Every long flag of `cmd` ("--repo"), and separately those that take a value.
void Flags(const CLI::App& cmd, std::vector<std::string>& all, std::vector<std::string>& valued) {
  for (const CLI::Option* option : cmd.get_options()) {
    if (option->get_group().empty()) continue;  // hidden: a deprecated spelling
    for (const std::string& name : option->get_lnames()) {
      all.push_back("--" + name);
      if (option->get_expected_min() > 0) valued.push_back("--" + name);
    }
  }
}

std::string Join(const std::vector<std::string>& words) {
  return fmt::format("{}", fmt::join(words, " "));
}

// A value after a flag that takes one is left to the shell's file-name completion.
std::string BashScript(const CLI::App& app) {
  std::vector<std::string> top = {"--help", "--version"};
  std::string cases;
  std::vector<std::string> valued;
  for (const CLI::App* cmd : Commands(app)) {
    top.push_back(cmd->get_name());
    std::vector<std::string> flags;
    Flags(*cmd, flags, valued);
    cases += fmt::format("    {}) words=\"{}\" ;;\n", cmd->get_name(), Join(flags));
  }
  return fmt::format(
      "# {0} completion for bash: source <({0} completion bash)\n"
      "_talos_reconciler() {{\n"
      "  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}} command= i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    case ${{COMP_WORDS[i]}} in -*) ;; *) command=${{COMP_WORDS[i]}}; break ;; esac\n"
      "  done\n"
      "  case \" {1} \" in *\" $prev \"*) COMPREPLY=(); return ;; esac\n"
      "  local words\n"
      "  case $command in\n"
      "    '') words=\"{2}\" ;;\n"
      "{3}"
      "  esac\n"
      "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "}}\n"
      "complete -o default -F _talos_reconciler {0}\n",
      kProgram, Join(valued), Join(top), cases);
}

// fish quotes with single quotes; a quote inside is escaped.
std::string FishQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string FishScript(const CLI::App& app) {
  std::string out =
      fmt::format("# {0} completion for fish: {0} completion fish | source\n", kProgram);
  out += fmt::format("complete -c {} -f\n", kProgram);
  for (const CLI::App* cmd : Commands(app)) {
    out += fmt::format("complete -c {} -n __fish_use_subcommand -a {} -d {}\n", kProgram,
                       cmd->get_name(), FishQuote(cmd->get_description()));
    for (const CLI::Option* option : cmd->get_options()) {
      for (const std::string& name : option->get_lnames()) {
        out += fmt::format("complete -c {} -n '__fish_seen_subcommand_from {}' -l {}{} -d {}\n",
                           kProgram, cmd->get_name(), name,
                           option->get_expected_min() > 0 ? " -r -F" : "",
                           FishQuote(option->get_description()));
      }
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> CompletionScript(const CLI::App& app, std::string_view shell) {
  if (shell == "bash") return BashScript(app);
  // zsh runs the bash function through its bash-completion emulation.
  if (shell == "zsh") {
    return fmt::format("#compdef {}\nautoload -U +X bashcompinit && bashcompinit\n{}", kProgram,
                       BashScript(app));
  }
  if (shell == "fish") return FishScript(app);
  return std::nullopt;
}

}  // namespace tr::reconciler
