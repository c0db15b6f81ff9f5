// README.md tells the truth about the binary:
//  - every fenced block marked `<!-- readme-test: exit=N [dir=PATH] -->` holds talos-reconciler
//    commands, each run from the repository root (or PATH) and expected to exit N; a block marked
//    `<!-- readme-test: output -->` after it is the shape of the last command's output: its lines,
//    in order, with `…` matching anything (a JSON block: each of its keys is in the output);
//  - every flag a command's --help lists is in the README, and every flag the README gives a
//    talos-reconciler command (in a code line, or as inline code of its own) is one it has.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/process.h"

namespace tr {
namespace {

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
    "--keep",                                          // scripts/demo
};

std::string Readme() {
  std::ifstream in(kSource + "/README.md");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Block {
  int line = 0;        // of the opening fence, 1-based
  std::string marker;  // the readme-test marker's text, empty when unmarked
  std::string info;    // the fence's info string
  std::vector<std::string> lines;
};

std::vector<Block> FencedBlocks(const std::string& text) {
  std::vector<Block> blocks;
  std::istringstream in(text);
  std::string line, marker;
  int number = 0;
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
    if (line.starts_with("```")) {
      blocks.push_back({number, marker, line.substr(3), {}});
      open = &blocks.back();
      marker.clear();
      continue;
    }
    if (line.starts_with("<!-- readme-test:")) {
      marker = line.substr(17, line.find("-->") - 17);
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

// The output matches the shape: every line (but a lone `…`) in order; JSON: every key.
void ExpectShape(const Block& shape, const std::string& output) {
  SCOPED_TRACE("README.md:" + std::to_string(shape.line) + " output shape");
  if (shape.info.starts_with("json")) {
    const std::regex key("\"([A-Za-z]+)\":");
    for (const std::string& line : shape.lines) {
      for (std::sregex_iterator it(line.begin(), line.end(), key), end; it != end; ++it) {
        EXPECT_THAT(output, testing::HasSubstr("\"" + (*it)[1].str() + "\":"));
      }
    }
    return;
  }
  std::istringstream in(output);
  std::vector<std::string> got;
  for (std::string line; std::getline(in, line);) got.push_back(line);
  size_t at = 0;
  for (const std::string& expected : shape.lines) {
    if (expected == "…" || expected.empty()) continue;
    const std::regex pattern(RegexOf(expected));
    while (at < got.size() && !std::regex_match(got[at], pattern)) ++at;
    EXPECT_LT(at, got.size()) << "no line like \"" << expected << "\" (in order) in:\n" << output;
    if (at == got.size()) return;
    ++at;
  }
}

TEST(ReadmeTest, MarkedExamplesRunAndTheirOutputHasTheShapeShown) {
  const std::vector<Block> blocks = FencedBlocks(Readme());
  int examples = 0;
  std::string last_output;
  for (const Block& block : blocks) {
    if (block.marker.find("output") != std::string::npos) {
      ExpectShape(block, last_output);
      continue;
    }
    if (block.marker.find("exit=") == std::string::npos) continue;
    const std::string dir = kSource + "/" + Attribute(block.marker, "dir");
    const int exit_code = std::stoi(Attribute(block.marker, "exit"));
    for (const std::string& command : Commands(block)) {
      SCOPED_TRACE("README.md:" + std::to_string(block.line) + ": " + command);
      ASSERT_TRUE(command.starts_with("talos-reconciler")) << "only talos-reconciler runs here";
      const ProcessResult r = RunCommand(
          {"bash", "-c", "cd '" + dir + "' && PATH='" + kBinaryDir + "':$PATH " + command});
      EXPECT_EQ(r.exit_code, exit_code) << r.out << r.err;
      last_output = r.out;
      ++examples;
    }
  }
  EXPECT_GE(examples, 8) << "the README's examples lost their readme-test markers";
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
