// The manual — README.md and every page under docs/ (tests/support/manual_pages.h) — tells the
// truth about the binary:
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
//    `## ` section of its page;
//  - `<!-- readme-test: skip REASON -->`: a command block that cannot run here, and why. Every
//    `sh` block has one of these markers, or tests/chart's `<!-- helm-test … -->`;
//  - every flag a command's --help lists is on some page, and every flag a page gives a
//    talos-reconciler command (in a code line, or as inline code of its own) is one it has;
//  - every relative link leads to a file, and its #anchor to a heading of it; README.md links
//    every page under docs/.
// The pages run in order, README.md first, in one temporary directory: a page may use what the
// README's tour made (docs/status.md reads its status branch). The commands run as written but
// for two substitutions, which cannot be avoided: every `/tmp/` is this test's own directory
// (tests run at once, and the manual's paths are one person's), and a leading `build/` is the
// build this test belongs to (build-asan in the second pass).
#include <fcntl.h>
#include <cctype>
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
#include "tests/support/manual_pages.h"
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
                                            "status", "upgrade-k8s", "version", "completion",
                                            "adopt",  "pause",       "resume"};
// Flags of other programs that the manual names as inline code of their own.
const std::set<std::string> kOtherTools = {
    "--cloud-config", "--pod-infra-container-image",  // kube-apiserver and kubelet flags
    "--enable-admission-plugins", "--disable-admission-plugins", "--keep-terminated-pod-volumes",
    "--default-watch-cache-size", "--min-request-timeout",  // kube-apiserver (talos-api.md §14)
    "--namespace",                                     // talosctl image pull
    "--keep", "--hold",                                // scripts/demo
    "--time-scale", "--address-prefix",                // talos-sim
    "--root",                                          // containerd (docs/talos-api.md)
    "--create-namespace",                              // helm install (docs/helm.md)
};

struct Page {
  std::string path;  // relative to the repository root: README.md, docs/running.md, ...
  std::string text;
};

std::vector<Page> Manual(bool with_reference = false) {
  std::vector<Page> pages;
  for (const std::string& path : test_support::ManualPages(kSource, with_reference)) {
    pages.push_back({path, test_support::ReadPage(kSource, path)});
  }
  return pages;
}

struct Block {
  std::string page;    // Page::path
  int line = 0;        // of the opening fence, 1-based
  int section = 0;     // line of the `## ` heading it is under
  std::string marker;  // the readme-test marker's text, empty when unmarked
  std::string info;    // the fence's info string
  std::vector<std::string> lines;
  bool Is(const std::string& kind) const { return marker.starts_with(kind); }
  std::string Where() const { return page + ":" + std::to_string(line); }
};

std::vector<Block> FencedBlocks(const Page& page) {
  std::vector<Block> blocks;
  std::istringstream in(page.text);
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
      blocks.push_back({page.path, number, section, marker, line.substr(3), {}});
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

// The blocks of every page, in the order the pages run.
std::vector<Block> FencedBlocks(const std::vector<Page>& pages) {
  std::vector<Block> blocks;
  for (const Page& page : pages) {
    for (Block& block : FencedBlocks(page)) blocks.push_back(std::move(block));
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

// A command's text with its two substitutions (see the top of this file). /tmp first, so a
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
  SCOPED_TRACE(shape.Where() + " output shape");
  const std::string missing = Missing(shape, output, false);
  EXPECT_EQ(missing, "") << "(in order) not in:\n" << output;
}

// A command of the manual running in the background, its stdout and stderr in `log`.
struct Running {
  std::string what;  // <page>:<line>: <command>
  fs::path log;
  std::unique_ptr<Subprocess> process;
};

std::unique_ptr<Running> Start(const Block& block, const std::string& command, const fs::path& tmp,
                               int number) {
  auto running = std::make_unique<Running>();
  running->what = block.Where() + ": " + command;
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
  const std::vector<Block> blocks = FencedBlocks(Manual());
  const fs::path tmp = fs::temp_directory_path() / ("tr-readme-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  std::vector<std::unique_ptr<Running>> servers;  // stopped at the end of their section
  int examples = 0, started = 0;
  std::string last_output;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& block = blocks[i];
    if (!servers.empty() &&
        (block.page != blocks[i - 1].page || block.section != blocks[i - 1].section)) {
      StopServers(servers);
    }
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
      SCOPED_TRACE(block.Where() + ": " + command);
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
  EXPECT_GE(examples, 20) << "the manual's examples lost their readme-test markers";
}

// A command block is run, or says why it cannot be.
TEST(ReadmeTest, EveryCommandBlockIsRunOrSaysWhyNot) {
  for (const Block& block : FencedBlocks(Manual())) {
    const bool prompt = std::any_of(block.lines.begin(), block.lines.end(),
                                    [](const std::string& l) { return l.starts_with("$ "); });
    if (!block.info.starts_with("sh") && !prompt) continue;
    SCOPED_TRACE(block.Where());
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

TEST(ReadmeTest, EveryFlagOfEveryCommandIsInTheManual) {
  std::set<std::string> documented;
  for (const Page& page : Manual()) documented.merge(FlagsIn(page.text));
  for (const auto& [command, flags] : HelpFlags()) {
    for (const std::string& flag : flags) {
      EXPECT_TRUE(documented.contains(flag))
          << "talos-reconciler " << command << " " << flag << " is on no page of the manual";
    }
  }
}

void ExpectFlagsExist(const std::string& text,
                      const std::map<std::string, std::set<std::string>>& help,
                      const std::set<std::string>& any) {
  // A command line: the flags after `talos-reconciler <command>` are that command's.
  const std::regex invocation("talos-reconciler ([a-z0-9-]+)([^`|#\\n]*)");
  for (std::sregex_iterator it(text.begin(), text.end(), invocation), end; it != end; ++it) {
    const std::string command = (*it)[1].str();
    if (!help.contains(command)) continue;  // prose: "talos-reconciler is a GitOps reconciler"
    for (const std::string& flag : FlagsIn((*it)[2].str())) {
      EXPECT_TRUE(help.at(command).contains(flag) || help.at("").contains(flag))
          << "talos-reconciler " << command << " " << flag;
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
        << "the page names " << flag << ", which no talos-reconciler command has";
  }
}


TEST(ReadmeTest, EveryFlagTheManualNamesExists) {
  const auto help = HelpFlags();
  std::set<std::string> any;
  for (const auto& [command, flags] : help) any.insert(flags.begin(), flags.end());
  for (const Page& page : Manual()) {
    SCOPED_TRACE(page.path);
    ExpectFlagsExist(page.text, help, any);
  }
}


// The text of a page without its fenced blocks (their lines left empty, so line numbers hold)
// and without inline code: what a reader sees as prose, where links are.
std::string Prose(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  bool fence = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("```")) {
      fence = !fence;
      line.clear();
    }
    if (fence) line.clear();
    out += std::regex_replace(line, std::regex("`[^`]*`"), "``") + "\n";
  }
  return out;
}

// GitHub's anchor of a heading: lower case; spaces become '-'; every character but letters,
// digits, '-' and '_' is dropped. A repeated heading gets -1, -2, ...
std::set<std::string> Anchors(const std::string& text) {
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  std::istringstream in(text);
  bool fence = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("```")) fence = !fence;
    if (fence || !line.starts_with("#")) continue;
    const size_t start = line.find_first_not_of('#');
    if (start == std::string::npos || line[start] != ' ') continue;
    std::string anchor;
    for (char c : line.substr(start + 1)) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') {
        anchor += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      } else if (c == ' ') {
        anchor += '-';
      }
    }
    const int n = seen[anchor]++;
    anchors.insert(n == 0 ? anchor : anchor + "-" + std::to_string(n));
  }
  return anchors;
}

struct Link {
  std::string target;  // as written: "running.md#exit-codes"
  fs::path file;       // relative to the repository root, normalized: "docs/running.md"
  std::string anchor;  // "exit-codes", or ""
};

// The relative links of a page (not http:, https: or mailto:).
std::vector<Link> RelativeLinks(const Page& page) {
  std::vector<Link> links;
  const std::string prose = Prose(page.text);
  const std::regex link("\\]\\(([^)\\s]+)\\)");
  for (std::sregex_iterator it(prose.begin(), prose.end(), link), end; it != end; ++it) {
    const std::string target = (*it)[1].str();
    if (target.starts_with("http://") || target.starts_with("https://") ||
        target.starts_with("mailto:")) {
      continue;
    }
    const size_t hash = target.find('#');
    const std::string file = target.substr(0, hash);
    Link l{target, fs::path(page.path), hash == std::string::npos ? "" : target.substr(hash + 1)};
    if (!file.empty()) l.file = (fs::path(page.path).parent_path() / file).lexically_normal();
    links.push_back(std::move(l));
  }
  return links;
}

// "See *Status reference*" became a link: each leads to a page, and to a heading of it.
TEST(ReadmeTest, EveryLinkLeadsToAPageAndItsAnchorToAHeading) {
  for (const Page& page : Manual(/*with_reference=*/true)) {
    for (const Link& link : RelativeLinks(page)) {
      SCOPED_TRACE(page.path + ": (" + link.target + ")");
      if (!fs::exists(fs::path(kSource) / link.file)) {
        ADD_FAILURE() << "no " << link.file;
        continue;
      }
      if (link.anchor.empty()) continue;
      if (link.file.extension() != ".md") {
        ADD_FAILURE() << "an anchor into a file that is not a page";
        continue;
      }
      const std::set<std::string> anchors =
          Anchors(test_support::ReadPage(kSource, link.file.generic_string()));
      EXPECT_TRUE(anchors.contains(link.anchor))
          << link.file << " has no heading #" << link.anchor << "; it has: "
          << ::testing::PrintToString(anchors);
    }
  }
}

// A page nobody links to is a page nobody finds: the README is the table of contents.
TEST(ReadmeTest, TheReadmeLinksEveryPage) {
  std::set<std::string> linked;
  for (const Link& link : RelativeLinks({"README.md", test_support::ReadPage(kSource, "README.md")})) {
    linked.insert(link.file.generic_string());
  }
  for (const std::string& page : test_support::ManualPages(kSource, /*with_reference=*/true)) {
    if (page == "README.md") continue;
    EXPECT_TRUE(linked.contains(page)) << "README.md does not link " << page;
  }
}

}  // namespace
}  // namespace tr
