#include "tests/chart/helm_runner.h"

#include <fstream>
#include <optional>
#include <sstream>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/support/manual_pages.h"

namespace tr::chart {
namespace {

namespace fs = std::filesystem;
using gitsource::testing::ProcessResult;
using gitsource::testing::RunCommand;
using gitsource::testing::RunOptions;

const fs::path kSource = TR_SOURCE_DIR;

HelmResult ToHelmResult(ProcessResult r) { return {r.exit_code, std::move(r.out), std::move(r.err)}; }

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

}  // namespace

HelmRunner::HelmRunner() : helm_(kSource / ".cache/chart-tools/helm") {
  if (!fs::exists(helm_)) {
    ADD_FAILURE() << "no helm at " << helm_ << ": run tests/chart/install-helm (scripts/test does)";
  }
  // The layout the manual's commands and the example's file:// dependency expect.
  fs::create_directories(tmp_ / "charts");
  fs::create_directories(tmp_ / "examples");
  fs::copy(kSource / "charts/talos-reconciler", tmp_ / "charts/talos-reconciler",
           fs::copy_options::recursive);
  fs::copy(kSource / "examples/helm", tmp_ / "examples/helm", fs::copy_options::recursive);
}

HelmResult HelmRunner::Run(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {helm_.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions options;
  options.working_dir = tmp_.path();
  // helm keeps its caches and configuration under these; none of the user's.
  options.extra_env = {"HELM_CACHE_HOME=" + (tmp_ / "helm-cache").string(),
                       "HELM_CONFIG_HOME=" + (tmp_ / "helm-config").string(),
                       "HELM_DATA_HOME=" + (tmp_ / "helm-data").string()};
  return ToHelmResult(RunCommand(argv, options));
}

fs::path HelmRunner::WriteValues(const std::string& yaml) {
  const fs::path path = tmp_ / fmt::format("values-{}.yaml", ++values_files_);
  gitsource::testing::WriteFile(path, yaml);
  return path;
}

HelmResult HelmRunner::TemplateResult(const std::string& values) {
  return Run({"template", "r", ChartDir().string(), "-n", "talos-system", "-f",
              WriteValues(values).string()});
}

Objects HelmRunner::Template(const std::string& values) {
  const HelmResult r = TemplateResult(values);
  EXPECT_EQ(r.exit_code, 0) << values << r.err;
  return Parse(r.out);
}

Objects HelmRunner::TemplateApp(const std::string& values) {
  const std::string app = (tmp_ / "examples/helm/app-with-sidecar").string();
  const HelmResult deps = Run({"dependency", "build", app});
  EXPECT_EQ(deps.exit_code, 0) << deps.out << deps.err;
  const HelmResult r = Run({"template", "a", app, "-f", WriteValues(values).string()});
  EXPECT_EQ(r.exit_code, 0) << values << r.err;
  return Parse(r.out);
}

HelmResult HelmRunner::RunManualCommand(const std::string& command) const {
  std::vector<std::string> words = Words(command);
  if (words.empty() || words[0] != "helm") return {.exit_code = -1, .out = "", .err = "not helm: " + command};
  words.erase(words.begin());
  if (!words.empty() && (words[0] == "install" || words[0] == "upgrade")) {
    words.push_back("--dry-run=client");
  }
  return Run(words);
}

fs::path ChartDir() { return kSource / "charts/talos-reconciler"; }

Objects Parse(const std::string& manifests) {
  Objects objects;
  for (const YAML::Node& doc : YAML::LoadAll(manifests)) {
    if (!doc.IsMap() || !doc["kind"]) continue;
    const std::string key =
        doc["kind"].as<std::string>() + "/" + doc["metadata"]["name"].as<std::string>();
    EXPECT_FALSE(objects.contains(key)) << "rendered twice: " << key;
    objects[key] = doc;
  }
  return objects;
}

std::vector<std::string> Args(const YAML::Node& container) {
  std::vector<std::string> args;
  for (const YAML::Node& a : container["args"]) args.push_back(a.as<std::string>());
  return args;
}

std::map<std::string, std::string> MountsOf(const YAML::Node& pod_spec,
                                            const YAML::Node& container) {
  std::map<std::string, std::string> volume_source;
  for (const YAML::Node& v : pod_spec["volumes"]) {
    const std::string name = v["name"].as<std::string>();
    volume_source[name] = v["secret"] ? v["secret"]["secretName"].as<std::string>() : name;
  }
  std::map<std::string, std::string> mounts;
  for (const YAML::Node& m : container["volumeMounts"]) {
    mounts[m["mountPath"].as<std::string>()] = volume_source[m["name"].as<std::string>()];
  }
  return mounts;
}

void ExpectVolumesForEveryMount(const YAML::Node& pod_spec, const YAML::Node& container) {
  std::map<std::string, int> volumes;
  for (const YAML::Node& v : pod_spec["volumes"]) ++volumes[v["name"].as<std::string>()];
  ASSERT_GT(container["volumeMounts"].size(), 0u);
  for (const YAML::Node& m : container["volumeMounts"]) {
    EXPECT_EQ(volumes[m["name"].as<std::string>()], 1) << m["name"].as<std::string>();
  }
}

std::string Base64Decode(const std::string& text) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned bits = 0;
  int count = 0;
  for (char c : text) {
    const size_t value = kAlphabet.find(c);
    if (value == std::string::npos) continue;  // padding
    bits = (bits << 6) | static_cast<unsigned>(value);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xff);
    }
  }
  return out;
}

std::string RunHelp() {
  const ProcessResult r = RunCommand(
      {fs::path(TR_BINARY_DIR).append("reconciler/talos-reconciler").string(), "run", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

namespace {

// The marked blocks of one page.
void AddHelmBlocks(const std::string& page, std::vector<ManualHelmBlock>& blocks) {
  std::ifstream in(kSource / page);
  std::optional<ManualHelmBlock> pending;  // marker seen, its block not yet closed
  bool in_block = false;
  const std::string marker = "<!-- helm-test expects=\"";
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.starts_with(marker)) {
      const size_t end = line.find('"', marker.size());
      pending = ManualHelmBlock{page + ":" + std::to_string(number),
                                Words(line.substr(marker.size(), end - marker.size())), {}};
      continue;
    }
    if (!in_block && !line.starts_with("```")) pending.reset();  // the block follows the marker
    if (line.starts_with("```")) {
      if (in_block && pending) blocks.push_back(*std::move(pending));
      if (in_block || line != "```sh") pending.reset();
      in_block = !in_block;
      continue;
    }
    if (in_block && pending && line.starts_with("helm ")) {
      pending->commands.push_back(line.substr(0, line.find(" #")));
    }
  }
}

void AddUnmarkedHelmCommands(const std::string& page, std::vector<std::string>& unmarked) {
  std::ifstream in(kSource / page);
  bool in_block = false, marked = false, after_marker = false;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.starts_with("```")) {
      marked = !in_block && after_marker;
      in_block = !in_block && line == "```sh";
      after_marker = false;
      continue;
    }
    after_marker = line.starts_with("<!-- helm-test expects=");
    if (in_block && !marked && line.starts_with("helm ")) {
      unmarked.push_back(page + ":" + std::to_string(number) + ": " + line);
    }
  }
}

}  // namespace

std::vector<ManualHelmBlock> ManualHelmBlocks() {
  std::vector<ManualHelmBlock> blocks;
  for (const std::string& page : test_support::ManualPages(kSource)) AddHelmBlocks(page, blocks);
  return blocks;
}

std::vector<std::string> UnmarkedManualHelmCommands() {
  std::vector<std::string> unmarked;
  for (const std::string& page : test_support::ManualPages(kSource)) {
    AddUnmarkedHelmCommands(page, unmarked);
  }
  return unmarked;
}

}  // namespace tr::chart
