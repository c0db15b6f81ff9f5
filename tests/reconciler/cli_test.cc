// The command line's conventions, on the real binary: `version` and `--version`, an unknown
// command or flag with a suggestion, usage errors exit 1 and name every missing flag at once,
// every error in one style ("error: ..."), every machine-readable output with `apiVersion` and
// `kind`, help that prints each default once and the same in every build.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "tests/support/process.h"
#include "yaml-cpp/yaml.h"

namespace tr::reconciler {
namespace {

using gitsource::testing::ProcessResult;
using gitsource::testing::RunCommand;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

ProcessResult Cli(std::vector<std::string> args) {
  args.insert(args.begin(), std::string(TR_BINARY_DIR) + "/reconciler/talos-reconciler");
  return RunCommand(args);
}

TEST(CliTest, VersionAsACommandAFlagAndJson) {
  const ProcessResult command = Cli({"version"});
  EXPECT_EQ(command.exit_code, 0) << command.err;
  EXPECT_THAT(command.out, testing::StartsWith("talos-reconciler "));
  const ProcessResult flag = Cli({"--version"});
  EXPECT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_THAT(flag.out, testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+ \\(commit [0-9a-f]{12}"
                                              "(-dirty)?, built [-0-9T:]+Z\\)\n"));
  const ProcessResult as_json = Cli({"version", "-o", "json"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  const nlohmann::json doc = nlohmann::json::parse(as_json.out);
  EXPECT_EQ("talos-reconciler " + doc.at("version").get<std::string>(),
            command.out.substr(0, command.out.find('\n')));
  EXPECT_THAT(flag.out, testing::StartsWith(doc.at("version").get<std::string>() + " (commit " +
                                            doc.at("commit").get<std::string>().substr(0, 12)));
  // The whole shape, pinned (a change is recorded in CHANGELOG.md).
  EXPECT_EQ(doc.at("apiVersion"), "talos-reconciler.dev/v1alpha1");
  EXPECT_EQ(doc.at("kind"), "Version");
  EXPECT_EQ(doc.size(), 7u) << as_json.out;
  EXPECT_THAT(doc.at("compiler").get<std::string>(), testing::MatchesRegex("(GCC|clang) [0-9.]+"));
  for (const char* library : {"gRPC", "protobuf", "abseil", "libgit2", "yaml-cpp", "openssl"}) {
    EXPECT_THAT(doc.at("libraries").value(library, ""), testing::MatchesRegex("[0-9][0-9.]*"))
        << library;
  }
  EXPECT_THAT(command.out, HasSubstr("\nlibraries: gRPC " + doc["libraries"]["gRPC"].get<std::string>()));
}

// The build stamps the commit it was built from and that commit's date (not the clock of the
// machine that built it), so that two builds of one commit are the same bytes.
TEST(CliTest, VersionNamesTheSourceCommitAndItsDate) {
  const nlohmann::json doc = nlohmann::json::parse(Cli({"version", "-o", "json"}).out);
  const std::string commit = doc.at("commit");
  ASSERT_THAT(commit, testing::MatchesRegex("[0-9a-f]{40}(-dirty)?")) << "built outside Git?";
  const std::string sha = commit.substr(0, 40);
  gitsource::testing::RunOptions in_utc;
  in_utc.extra_env = {"TZ=UTC"};
  const ProcessResult date = RunCommand(
      {"git", "-C", TR_SOURCE_DIR, "show", "-s", "--date=format-local:%Y-%m-%dT%H:%M:%SZ",
       "--format=%cd", sha},
      in_utc);
  ASSERT_EQ(date.exit_code, 0) << date.err;
  EXPECT_EQ(doc.at("buildDate").get<std::string>() + "\n", date.out);
}

TEST(CliTest, UnknownCommandSuggestsTheClosestAndExits1) {
  const ProcessResult typo = Cli({"stauts"});
  EXPECT_EQ(typo.exit_code, 1);
  EXPECT_THAT(typo.err, HasSubstr("unknown command \"stauts\" for talos-reconciler; did you mean "
                                  "\"status\"?"));
  const ProcessResult far = Cli({"deploy"});
  EXPECT_EQ(far.exit_code, 1);
  EXPECT_THAT(far.err, AllOf(HasSubstr("unknown command \"deploy\""), Not(HasSubstr("did you"))));
}

TEST(CliTest, UsageErrorsExit1AndNameEveryMissingFlag) {
  const ProcessResult run = Cli({"run"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, AllOf(HasSubstr("--repo"), HasSubstr("--state-dir")));
  const ProcessResult bad_flag = Cli({"validate", "--no-such-flag"});
  EXPECT_EQ(bad_flag.exit_code, 1);
  EXPECT_THAT(bad_flag.err, HasSubstr("--no-such-flag"));
  const ProcessResult help = Cli({"run", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--git-allowed-signers"));
  // A bad value is named in the user's words, not as a range up to 1.8e308.
  const ProcessResult zero = Cli({"upgrade-k8s", "--cluster", "x", "--to", "1.35.0",
                                  "--credentials-dir", "creds", "--poll-interval-ms", "0"});
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_THAT(zero.err, HasSubstr("--poll-interval-ms (set by the command line): want a number "
                                  "of milliseconds above 0, not 0"));
}

std::string Binary() { return std::string(TR_BINARY_DIR) + "/reconciler/talos-reconciler"; }

// What bash completes for the words typed so far (the last one is being typed).
std::string BashCompletes(const std::string& typed_words) {
  const std::string script = "source <(" + Binary() + " completion bash); COMP_WORDS=(" +
                             typed_words + "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); " +
                             "_talos_reconciler; echo \"${COMPREPLY[*]}\"";
  const ProcessResult r = RunCommand({"bash", "-c", script});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(CliTest, BashCompletesCommandsAndTheirFlags) {
  EXPECT_EQ(BashCompletes("talos-reconciler sta"), "status\n");
  EXPECT_EQ(BashCompletes("talos-reconciler run --git-al"),
            "--git-allowed-signers --git-allow-insecure-http\n");
  EXPECT_EQ(BashCompletes("talos-reconciler status --json --rep"), "--repo\n");
  // After a flag that takes a value, the shell completes file names instead.
  EXPECT_EQ(BashCompletes("talos-reconciler run --git-ca-file ''"), "\n");
}

TEST(CliTest, FishCompletesCommandsAndTheirFlags) {
  const std::string script = Binary() +
                             " completion fish | source; complete -C'talos-reconciler sta'; " +
                             "complete -C'talos-reconciler plan --obs'";
  const ProcessResult r = RunCommand({"fish", "-c", script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("status\tPrint every cluster"));
  EXPECT_THAT(r.out, HasSubstr("--observed\tYAML file with what the nodes run"));
}

TEST(CliTest, ZshLoadsTheCompletionThroughItsBashEmulation) {
  const std::string script = "autoload -U compinit && compinit -u && source <(" + Binary() +
                             " completion zsh) && whence -w _talos_reconciler";
  const ProcessResult r = RunCommand({"zsh", "-f", "-c", script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "_talos_reconciler: function\n");
  EXPECT_EQ(Cli({"completion", "powershell"}).exit_code, 1);
}

// Help speaks the user's words: examples, and no parser internals ("ENUM:value in {text->0}").
TEST(CliTest, HelpHasExamplesAndNoParserInternals) {
  for (const char* command : {"validate", "plan", "run", "status", "upgrade-k8s"}) {
    SCOPED_TRACE(command);
    const ProcessResult help = Cli({command, "--help"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_THAT(help.out, HasSubstr("Example"));
    EXPECT_THAT(help.out, AllOf(Not(HasSubstr("ENUM")), Not(HasSubstr("->")),
                                Not(HasSubstr("POSITIVE")), Not(HasSubstr("{false}"))));
  }
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

// Every command, as `talos-reconciler --help` lists them.
std::vector<std::string> Commands() {
  const ProcessResult help = Cli({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  std::vector<std::string> commands;
  bool listing = false;
  for (const std::string& line : Lines(help.out)) {
    if (line == "Subcommands:") listing = true;
    if (!listing || !line.starts_with("  ")) continue;
    commands.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  EXPECT_GE(commands.size(), 10u) << help.out;
  return commands;
}

// The long flags of a command's help, in order ("--observed"; not -h/--help).
std::vector<std::string> LongFlags(const std::string& command) {
  std::vector<std::string> flags;
  for (const std::string& line : Lines(Cli({command, "--help"}).out)) {
    const size_t at = line.find("--");
    if (!line.starts_with("  ") || at == std::string::npos || at > 8) continue;
    std::string flag = line.substr(at, line.find_first_of(" ,", at) - at);
    if (flag != "--help") flags.push_back(flag);
  }
  return flags;
}

// A status branch with no cluster yet, in a bare repository: what `status` reads.
std::string EmptyStatusRepo(const gitsource::testing::TempDir& tmp) {
  const std::string work = (tmp / "work").string(), bare = (tmp / "fleet.git").string();
  for (const std::vector<std::string>& git :
       {std::vector<std::string>{"git", "init", "-q", "-b", "talos-reconciler/status", work},
        {"git", "-C", work, "commit", "-q", "--allow-empty", "-m", "status"},
        {"git", "clone", "-q", "--bare", work, bare}}) {
    const ProcessResult r = RunCommand(git);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  return "file://" + bare;
}

// Every `-o json` and `-o yaml` of every command is a document with `apiVersion` and `kind`. A
// command that gains a machine-readable format fails here until it is run below (and carries
// both).
TEST(CliTest, EveryMachineReadableOutputHasApiVersionAndKind) {
  const gitsource::testing::TempDir tmp;
  const std::string repo = std::string(TR_SOURCE_DIR) + "/examples/repo";
  const std::string observed = std::string(TR_SOURCE_DIR) + "/examples/observed.yaml";
  const std::string status_repo = EmptyStatusRepo(tmp);
  const std::map<std::string, std::vector<std::string>> runs = {
      {"plan", {"plan", repo, "--observed", observed}},
      {"propose", {"propose", repo, "--dry-run", "--observed", observed}},
      {"status", {"status", "--repo", status_repo}},
      {"version", {"version"}},
  };
  std::map<std::string, std::string> kinds;
  size_t documents = 0;
  for (const std::string& command : Commands()) {
    for (const std::string& line : Lines(Cli({command, "--help"}).out)) {
      if (!line.starts_with("  -o,--output")) continue;
      for (const char* format : {"json", "yaml"}) {
        if (line.find(format) == std::string::npos) continue;
        SCOPED_TRACE(command + " -o " + format);
        ASSERT_TRUE(runs.contains(command)) << "run it in this test";
        std::vector<std::string> args = runs.at(command);
        args.insert(args.end(), {"-o", format});
        const ProcessResult r = Cli(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        // JSON is YAML: one parser reads both.
        const YAML::Node doc = YAML::Load(r.out);
        ASSERT_TRUE(doc.IsMap()) << r.out;
        EXPECT_EQ(doc["apiVersion"].as<std::string>(""), "talos-reconciler.dev/v1alpha1");
        const std::string kind = doc["kind"].as<std::string>("");
        EXPECT_FALSE(kind.empty()) << r.out;
        EXPECT_TRUE(!kinds.contains(command) || kinds[command] == kind) << "json and yaml differ";
        kinds[command] = kind;
        ++documents;
      }
    }
  }
  EXPECT_EQ(documents, 6u) << "plan and status (json, yaml), propose and version (json)";
  EXPECT_EQ(kinds["propose"], "ProposalReport");
}

// A default is said once: by the flag's text or by CLI11's `=value`, never both ("(default 1h)
// (default 1h)").
TEST(CliTest, NoFlagHelpPrintsItsDefaultTwice) {
  for (const std::string& command : Commands()) {
    for (const std::string& line : Lines(Cli({command, "--help"}).out)) {
      const size_t first = line.find("(default");
      EXPECT_TRUE(first == std::string::npos ||
                  line.find("(default", first + 1) == std::string::npos)
          << command << ": " << line;
    }
  }
}

// `Excludes:` (and `Needs:`) name their flags in alphabetical order, not in CLI11's order of
// addresses, so every build prints the same help and docs/reference matches them all.
TEST(CliTest, HelpListsRelatedFlagsInNameOrder) {
  size_t lists = 0;
  for (const std::string& command : Commands()) {
    for (const std::string& line : Lines(Cli({command, "--help"}).out)) {
      for (const char* label : {"Excludes: ", "Needs: "}) {
        const size_t at = line.find(label);
        if (at == std::string::npos) continue;
        const std::string rest = line.substr(at + std::string(label).size());
        const std::vector<std::string> names =
            absl::StrSplit(rest.substr(0, rest.find(" Excludes:")), ' ');
        EXPECT_TRUE(std::is_sorted(names.begin(), names.end())) << command << ": " << line;
        ++lists;
      }
    }
  }
  EXPECT_GE(lists, 6u) << "plan's and propose's three observation flags exclude each other";
}

// Every error of every command has one shape: a line "error: ..." (lower case, as kubectl and
// git write theirs), never "Error: ", a command's name as prefix, or CLI11's own sentences.
void ExpectOneErrorStyle(const ProcessResult& r, const std::string& what) {
  EXPECT_NE(r.exit_code, 0) << what;
  bool error_line = false;
  for (const std::string& line : Lines(r.err)) {
    error_line = error_line || line.starts_with("error: ");
    EXPECT_FALSE(line.starts_with("Error") || line.starts_with("ERROR") ||
                 line.starts_with("talos-reconciler ") || line.starts_with("upgrade-k8s: ") ||
                 line.starts_with("The following"))
        << what << ": " << line;
  }
  EXPECT_TRUE(error_line) << what << ": " << r.err;
}

TEST(CliTest, EveryUsageErrorIsAnErrorLineAndAnUnknownFlagGetsASuggestion) {
  for (const std::string& command : Commands()) {
    SCOPED_TRACE(command);
    const ProcessResult unknown = Cli({command, "--no-such-flag-at-all"});
    ExpectOneErrorStyle(unknown, command + " --no-such-flag-at-all");
    EXPECT_THAT(unknown.err,
                AllOf(HasSubstr("error: unknown flag --no-such-flag-at-all for " + command + "\n"),
                      HasSubstr("Run 'talos-reconciler " + command + " --help'")));
    // Its longest flag with one letter dropped is suggested back.
    std::vector<std::string> flags = LongFlags(command);
    if (flags.empty()) continue;  // completion: a shell name only
    const std::string flag = *std::max_element(
        flags.begin(), flags.end(), [](auto& a, auto& b) { return a.size() < b.size(); });
    const std::string typo = flag.substr(0, 4) + flag.substr(5);
    const ProcessResult suggested = Cli({command, typo});
    ExpectOneErrorStyle(suggested, command + " " + typo);
    EXPECT_THAT(suggested.err, HasSubstr("unknown flag " + typo + " for " + command +
                                         "; did you mean " + flag + "?"));
  }
  // An unknown flag is named before the required ones it kept from being read.
  const ProcessResult status = Cli({"status", "--jsn"});
  EXPECT_THAT(status.err, HasSubstr("error: unknown flag --jsn for status\n"));
  EXPECT_THAT(status.err, Not(HasSubstr("--repo"))) << "the deprecated --json is not suggested";
  const ProcessResult bad_value = Cli({"validate", "-o", "bogus"});
  EXPECT_THAT(bad_value.err, HasSubstr("error: --output: bogus not in {text,github}"));
  ExpectOneErrorStyle(Cli({"plan", "a", "b"}), "plan a b");
  ExpectOneErrorStyle(Cli({"plan", "a", "--=x"}), "plan a --=x");
  EXPECT_THAT(Cli({"plan", "a", "b"}).err, HasSubstr("error: unexpected argument for plan: b"));
  ExpectOneErrorStyle(Cli({"validate", "-o", "bogus"}), "validate -o bogus");
  ExpectOneErrorStyle(Cli({"run"}), "run");
  ExpectOneErrorStyle(Cli({}), "no command");
  ExpectOneErrorStyle(Cli({"stauts"}), "stauts");
  ExpectOneErrorStyle(Cli({"plan", "--observed", "a", "--talosconfig", "b"}), "excludes");
}

// What went wrong once a command runs is said in the same style.
TEST(CliTest, EveryCommandsErrorIsAnErrorLine) {
  const gitsource::testing::TempDir tmp;
  const std::string missing = (tmp / "missing").string();
  ExpectOneErrorStyle(Cli({"validate", missing}), "validate");
  ExpectOneErrorStyle(Cli({"plan", missing, "--observed", missing}), "plan");
  ExpectOneErrorStyle(Cli({"propose", missing, "--dry-run", "--observed", missing}), "propose");
  ExpectOneErrorStyle(Cli({"status", "--repo", "file://" + missing}), "status");
  ExpectOneErrorStyle(Cli({"upgrade-k8s", "--cluster", "x", "--to", "one", "--credentials-dir",
                           missing, "--repo", missing}),
                      "upgrade-k8s --to one");
  ExpectOneErrorStyle(Cli({"upgrade-k8s", "--cluster", "x", "--to", "1.35.0", "--credentials-dir",
                           missing, "--repo", missing}),
                      "upgrade-k8s without a repository");
  ExpectOneErrorStyle(Cli({"adopt", "x", "--talosconfig", missing}), "adopt");
  for (const char* verb : {"pause", "resume", "retry"}) {
    ExpectOneErrorStyle(Cli({verb, "x", "--reason", "why", "--dir", missing}), verb);
  }
  ExpectOneErrorStyle(
      Cli({"run", "--repo", "file://" + missing, "--state-dir", missing, "--poll-interval", "1d"}),
      "run");
}

}  // namespace
}  // namespace tr::reconciler
