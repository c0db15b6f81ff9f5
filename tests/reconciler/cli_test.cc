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
  EXPECT_THAT(command.out, testing::MatchesRegex("talos-reconciler [0-9]+\\.[0-9]+\\.[0-9]+\n"));
  const ProcessResult flag = Cli({"--version"});
  EXPECT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_THAT(command.out, HasSubstr(flag.out.substr(0, flag.out.find('\n'))));
  const ProcessResult json = Cli({"version", "-o", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ("talos-reconciler " + nlohmann::json::parse(json.out).at("version").get<std::string>(),
            command.out.substr(0, command.out.size() - 1));
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
  EXPECT_THAT(run.err, AllOf(HasSubstr("--repo"), HasSubstr("--credentials-dir"),
                             HasSubstr("--state-dir")));
  const ProcessResult bad_flag = Cli({"validate", "--no-such-flag"});
  EXPECT_EQ(bad_flag.exit_code, 1);
  EXPECT_THAT(bad_flag.err, HasSubstr("--no-such-flag"));
  const ProcessResult help = Cli({"run", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--git-allowed-signers"));
}

}  // namespace
}  // namespace tr::reconciler
