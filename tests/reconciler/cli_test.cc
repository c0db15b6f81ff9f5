// The command line's conventions, on the real binary: `version` and `--version`, an unknown
// command with a suggestion, usage errors exit 1 and name every missing flag at once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"
#include "tests/support/process.h"

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

}  // namespace
}  // namespace tr::reconciler
