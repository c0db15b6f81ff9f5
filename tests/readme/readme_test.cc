// README.md tells the truth about the binary:
//  - every fenced block marked `<!-- readme-test: exit=N [dir=PATH] -->` holds commands, each
//    run with bash from the repository root (or PATH), the built talos-reconciler first on
//    PATH, and expected to exit N; a block marked `<!-- readme-test: output -->` after it is
//    the shape of the last command's stdout: its lines, in order, with `…` matching anything
//    (a JSON block: each of its keys is in the output);
//  - `<!-- readme-test: exit=N stop=sigterm -->`: a command that runs until stopped (the
//    daemon). It runs until its stdout and stderr hold every line of the output block after
//    it, in any order (its clusters are reconciled at once), then gets SIGTERM and must exit N;
//  - `<!-- readme-test: background ready=FILE -->`: a server (talos-sim), started and waited
//    for until FILE exists; stopped with SIGTERM, and expected to exit 0, at the end of its
//    `## ` section;
//  - `<!-- readme-test: skip REASON -->`: a command block that cannot run here, and why. Every
//    `sh` block has one of these markers, or tests/chart's `<!-- helm-test … -->`;
//  - every flag a command's --help lists is in the README, and every flag the README gives a
//    talos-reconciler command (in a code line, or as inline code of its own) is one it has.
// The commands run as written but for two substitutions, which cannot be avoided: every `/tmp/`
// is this test's own directory (tests run at once, and the README's paths are one person's),
// and a leading `build/` is the build this test belongs to (build-asan in the second pass).
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "gitsource/subprocess.h"
#include "tests/support/process.h"
#include "tests/support/wait.h"

namespace tr {
namespace {

namespace fs = std::filesystem;
using gitsource::Subprocess;
using gitsource::testing::ProcessResult;
using gitsource::testing::RunCommand;

const std::string kSource = TR_SOURCE_DIR;
const std::string kBinaryDir = std::string(TR_BINARY_DIR) + "/reconciler";
const std::vector<std::string> kCommands = {"",       "validate",    "plan",    "run",
                                            "status", "upgrade-k8s", "version", "completion"};
// Flags of other programs that the README names as inline code of their own.
const std::set<std::string> kOtherTools = {
    "--cloud-config", "--pod-infra-container-image",  // kube-apiserver and kubelet flags
    "--enable-admission-plugins", "--disable-admission-plugins", "--keep-terminated-pod-volumes",
    "--namespace",                                     // talosctl image pull
    "--keep", "--hold",                                // scripts/demo
    "--time-scale", "--address-prefix",                // talos-sim
};

std::string Readme() {
  std::ifstream in(kSource + "/README.md");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Block {
  int line = 0;        // of the opening fence, 1-based
  int section = 0;     // line of the `## ` heading it is under
  std::string marker;  // the readme-test marker's text, empty when unmarked
  std::string info;    // the fence's info string
  std::vector<std::string> lines;
  bool Is(const std::string& kind) const { return marker.starts_with(kind); }
};

std::vector<Block> FencedBlocks(const std::string& text) {
  std::vector<Block> blocks;
  std::istringstream in(text);
  std::string line, marker;
  int number = 0, section = 0;
  Block* open = nullptr;
  while (std::getline(in, line)) {
    ++number;
    if (open != nullptr) {
      if (line.starts_with("```")) {
        open = nullptr;
      } else {
        open->lines.push_back(line);
      }
      continue;
    }
    if (line.starts_with("## ")) section = number;
    if (line.starts_with("```")) {
      blocks.push_back({number, section, marker, line.substr(3), {}});
      open = &blocks.back();
      marker.clear();
      continue;
    }
    if (line.starts_with("<!-- helm-test ")) {
      marker = "helm-test";  // tests/chart runs the block
    } else if (line.starts_with("<!-- readme-test:")) {
      marker = line.substr(17, line.find("-->") - 17);
      marker.erase(0, marker.find_first_not_of(' '));
      marker.erase(marker.find_last_not_of(' ') + 1);
    } else if (!line.empty()) {
      marker.clear();
    }
  }
  return blocks;
}

// The commands of a block: continuation lines joined, comments and prompts dropped.
std::vector<std::string> Commands(const Block& block) {
  std::vector<std::string> commands;
  std::string pending;
  for (std::string line : block.lines) {
    if (const size_t hash = line.find("  #"); hash != std::string::npos) line.resize(hash);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    const bool continued = !line.empty() && line.back() == '\\';
    if (continued) line.pop_back();
    pending += line;
    if (continued) continue;
    if (pending.find_first_not_of(' ') != std::string::npos) commands.push_back(pending);
    pending.clear();
  }
  return commands;
}

std::string Attribute(const std::string& marker, const std::string& name) {
  std::smatch m;
  const std::regex pattern(name + "=([^ ]+)");
  return std::regex_search(marker, m, pattern) ? m[1].str() : "";
}

// The README's text with its two substitutions (see the top of this file). /tmp first, so a
// build directory that is itself under /tmp (a checkout in /tmp) is left as it is.
std::string Substituted(const std::string& text, const fs::path& tmp) {
  const std::string moved = std::regex_replace(text, std::regex("/tmp/"), tmp.string() + "/");
  return std::regex_replace(moved, std::regex("(^| )build/"),
                            "$1" + std::string(TR_BINARY_DIR) + "/");
}

// `command` for bash: from the repository root (or `dir`), the built binary first on PATH.
std::string Shell(const std::string& command, const std::string& dir) {
  return "export PATH='" + kBinaryDir + "':$PATH && cd '" + kSource + "/" + dir + "' && " +
         command;
}

std::string RegexOf(const std::string& expected) {
  std::string out;
  static const std::string kEllipsis = "…";
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected.compare(i, kEllipsis.size(), kEllipsis) == 0) {
      out += ".*";
      i += kEllipsis.size() - 1;
    } else if (std::string("\\^$.|?*+()[]{}").find(expected[i]) != std::string::npos) {
      out += std::string("\\") + expected[i];
    } else {
      out += expected[i];
    }
  }
  return out;
}

// The first part of the shape `output` lacks ("" when it has them all): every line but a lone
// `…`, in order unless `any_order`; for a JSON block, every key.
std::string Missing(const Block& shape, const std::string& output, bool any_order) {
  if (shape.info.starts_with("json")) {
    const std::regex key("\"([A-Za-z]+)\":");
    for (const std::string& line : shape.lines) {
      for (std::sregex_iterator it(line.begin(), line.end(), key), end; it != end; ++it) {
        const std::string quoted = "\"" + (*it)[1].str() + "\":";
        if (output.find(quoted) == std::string::npos) return "the key " + quoted;
      }
    }
    return "";
  }
  std::istringstream in(output);
  std::vector<std::string> got;
  for (std::string line; std::getline(in, line);) got.push_back(line);
  size_t at = 0;
  for (const std::string& expected : shape.lines) {
    if (expected == "…" || expected.empty()) continue;
    const std::regex pattern(RegexOf(expected));
    if (any_order) at = 0;
    while (at < got.size() && !std::regex_match(got[at], pattern)) ++at;
    if (at == got.size()) return "a line like \"" + expected + "\"";
    ++at;
  }
  return "";
}

void ExpectShape(const Block& shape, const std::string& output) {
  SCOPED_TRACE("README.md:" + std::to_string(shape.line) + " output shape");
  const std::string missing = Missing(shape, output, false);
  EXPECT_EQ(missing, "") << "(in order) not in:\n" << output;
}

// A command of the README running in the background, its stdout and stderr in `log`.
struct Running {
  std::string what;  // README.md:<line>: <command>
  fs::path log;
  std::unique_ptr<Subprocess> process;
};

std::unique_ptr<Running> Start(const Block& block, const std::string& command, const fs::path& tmp,
                               int number) {
  auto running = std::make_unique<Running>();
  running->what = "README.md:" + std::to_string(block.line) + ": " + command;
  running->log = tmp / ("background-" + std::to_string(number) + ".log");
  const int fd = ::open(running->log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  std::vector<std::string> env = gitsource::testing::HermeticEnvironment();
  // `exec`: the signal reaches the command itself, not bash.
  absl::StatusOr<Subprocess> child = Subprocess::Spawn(
      {{"bash", "-c", Shell("exec " + command, Attribute(block.marker, "dir"))}, env, -1, fd, fd, {}});
  ::close(fd);
  EXPECT_TRUE(child.ok()) << running->what << ": " << child.status();
  if (child.ok()) running->process = std::make_unique<Subprocess>(*std::move(child));
  return running;
}

std::string LogOf(const Running& running) {
  return gitsource::testing::ReadFile(running.log);
}

// SIGTERM, and the exit code (-1 when it did not exit within the time a clean stop takes).
int Stop(Running& running) {
  if (!running.process) return -1;
  running.process->Signal(SIGTERM);
  const std::optional<int> status = running.process->WaitFor(std::chrono::seconds(30));
  return status && WIFEXITED(*status) ? WEXITSTATUS(*status) : -1;
}

void StopServers(std::vector<std::unique_ptr<Running>>& servers) {
  for (const auto& server : servers) {
    EXPECT_EQ(Stop(*server), 0) << server->what << ":\n" << LogOf(*server);
  }
  servers.clear();
}

TEST(ReadmeTest, MarkedExamplesRunAndTheirOutputHasTheShapeShown) {
  const std::vector<Block> blocks = FencedBlocks(Readme());
  const fs::path tmp = fs::temp_directory_path() / ("tr-readme-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  std::vector<std::unique_ptr<Running>> servers;  // stopped at the end of their section
  int examples = 0, started = 0;
  std::string last_output;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& block = blocks[i];
    if (!servers.empty() && block.section != blocks[i - 1].section) StopServers(servers);
    if (block.Is("output")) {
      ExpectShape(block, Substituted(last_output, tmp));
      continue;
    }
    if (block.Is("background")) {
      const fs::path ready = Substituted(Attribute(block.marker, "ready"), tmp);
      for (const std::string& command : Commands(block)) {
        fs::remove(ready);  // an earlier section's server left it
        servers.push_back(Start(block, Substituted(command, tmp), tmp, ++started));
        ASSERT_TRUE(test_support::WaitUntil([&] { return fs::exists(ready); }))
            << servers.back()->what << ": no " << ready << "\n" << LogOf(*servers.back());
      }
      continue;
    }
    if (!block.Is("exit=")) continue;
    const int exit_code = std::stoi(Attribute(block.marker, "exit"));
    for (const std::string& command : Commands(block)) {
      SCOPED_TRACE("README.md:" + std::to_string(block.line) + ": " + command);
      ++examples;
      if (Attribute(block.marker, "stop") == "sigterm") {
        ASSERT_TRUE(i + 1 < blocks.size() && blocks[i + 1].Is("output"))
            << "a command that runs until stopped needs the output block it is stopped after";
        const Block& shape = blocks[++i];
        std::unique_ptr<Running> run = Start(block, Substituted(command, tmp), tmp, ++started);
        const bool shown = test_support::WaitUntil(
            [&] { return Missing(shape, LogOf(*run), true).empty(); });
        EXPECT_TRUE(shown) << Missing(shape, LogOf(*run), true) << " is not in:\n" << LogOf(*run);
        EXPECT_EQ(Stop(*run), exit_code) << LogOf(*run);
        continue;
      }
      const ProcessResult r = RunCommand(
          {"bash", "-c", Shell(Substituted(command, tmp), Attribute(block.marker, "dir"))});
      EXPECT_EQ(r.exit_code, exit_code) << r.out << r.err;
      last_output = r.out;
    }
  }
  StopServers(servers);
  fs::remove_all(tmp);
  EXPECT_GE(examples, 20) << "the README's examples lost their readme-test markers";
}

// A command block is run, or says why it cannot be.
TEST(ReadmeTest, EveryCommandBlockIsRunOrSaysWhyNot) {
  for (const Block& block : FencedBlocks(Readme())) {
    const bool prompt = std::any_of(block.lines.begin(), block.lines.end(),
                                    [](const std::string& l) { return l.starts_with("$ "); });
    if (!block.info.starts_with("sh") && !prompt) continue;
    SCOPED_TRACE("README.md:" + std::to_string(block.line));
    const bool run = block.Is("exit=") || block.Is("background ready=") || block.Is("helm-test");
    const bool skipped = block.Is("skip ") && block.marker.size() > 10;
    EXPECT_TRUE(run || skipped) << "a command block without <!-- readme-test: exit=N --> or "
                                   "<!-- readme-test: skip REASON -->";
  }
}

std::set<std::string> FlagsIn(const std::string& text) {
  std::set<std::string> flags;
  const std::regex flag("(^|[^A-Za-z0-9-])(--[a-z][a-z0-9-]*)");
  for (std::sregex_iterator it(text.begin(), text.end(), flag), end; it != end; ++it) {
    flags.insert((*it)[2].str());
  }
  return flags;
}

std::map<std::string, std::set<std::string>> HelpFlags() {
  std::map<std::string, std::set<std::string>> flags;
  for (const std::string& command : kCommands) {
    std::vector<std::string> argv = {kBinaryDir + "/talos-reconciler"};
    if (!command.empty()) argv.push_back(command);
    argv.push_back("--help");
    const ProcessResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 0) << command << r.err;
    flags[command] = FlagsIn(r.out);
  }
  return flags;
}

TEST(ReadmeTest, EveryFlagOfEveryCommandIsInTheReadme) {
  const std::set<std::string> documented = FlagsIn(Readme());
  for (const auto& [command, flags] : HelpFlags()) {
    for (const std::string& flag : flags) {
      EXPECT_TRUE(documented.contains(flag)) << "talos-reconciler " << command << " " << flag;
    }
  }
}

TEST(ReadmeTest, EveryFlagTheReadmeNamesExists) {
  const auto help = HelpFlags();
  std::set<std::string> any;
  for (const auto& [command, flags] : help) any.insert(flags.begin(), flags.end());
  const std::string text = Readme();
  // A command line: the flags after `talos-reconciler <command>` are that command's.
  const std::regex invocation("talos-reconciler ([a-z0-9-]+)([^`|#\\n]*)");
  for (std::sregex_iterator it(text.begin(), text.end(), invocation), end; it != end; ++it) {
    const std::string command = (*it)[1].str();
    if (!help.contains(command)) continue;  // prose: "talos-reconciler is a GitOps reconciler"
    for (const std::string& flag : FlagsIn((*it)[2].str())) {
      EXPECT_TRUE(help.at(command).contains(flag) || help.at("").contains(flag))
          << "README: talos-reconciler " << command << " " << flag;
    }
  }
  // A flag as inline code of its own (`--poll-interval`, `--git-*`): some command's.
  const std::regex span("`(--[a-z][a-z0-9-]*)(\\*?)[^`]*`");
  for (std::sregex_iterator it(text.begin(), text.end(), span), end; it != end; ++it) {
    const std::string flag = (*it)[1].str();
    if (kOtherTools.contains(flag)) continue;
    if ((*it)[2].length() > 0) {
      EXPECT_TRUE(std::any_of(any.begin(), any.end(),
                              [&](const std::string& f) { return f.starts_with(flag); }))
          << flag << "*";
      continue;
    }
    EXPECT_TRUE(any.contains(flag))
        << "README names " << flag << ", which no talos-reconciler command has";
  }
}

}  // namespace
}  // namespace tr
