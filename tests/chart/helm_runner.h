// Test support for the chart tests: runs helm (from .cache/chart-tools, see install-helm) on a
// copy of charts/ and examples/helm in a temporary directory, and reads rendered objects.
// Not thread-safe; one per test.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "yaml-cpp/yaml.h"

namespace tr::chart {

struct HelmResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Rendered objects by "Kind/name".
using Objects = std::map<std::string, YAML::Node>;

class HelmRunner {
 public:
  // Records a test failure when helm is not installed.
  HelmRunner();

  HelmResult Run(const std::vector<std::string>& args) const;
  // Writes `yaml` to a new values file in the temporary directory; returns its path.
  std::filesystem::path WriteValues(const std::string& yaml);
  // `helm template r <chart> -n talos-system -f <values>`.
  HelmResult TemplateResult(const std::string& values);
  // The same, parsed; records a failure when helm fails.
  Objects Template(const std::string& values);
  // examples/helm/app-with-sidecar (release "a"), its dependency built first.
  Objects TemplateApp(const std::string& values);
  // A `helm …` line of the manual (docs/helm.md), run from the copy's root; install and upgrade
  // get --dry-run=client, as there is no cluster here.
  HelmResult RunManualCommand(const std::string& command) const;

 private:
  std::filesystem::path helm_;
  gitsource::testing::TempDir tmp_;
  int values_files_ = 0;
};

// charts/talos-reconciler in the source tree.
std::filesystem::path ChartDir();
Objects Parse(const std::string& manifests);
std::vector<std::string> Args(const YAML::Node& container);
// The container's mounts: mountPath -> the Secret's name, or the volume's name when the pod
// spec's volume is not a Secret.
std::map<std::string, std::string> MountsOf(const YAML::Node& pod_spec,
                                            const YAML::Node& container);
void ExpectVolumesForEveryMount(const YAML::Node& pod_spec, const YAML::Node& container);
std::string Base64Decode(const std::string& text);
// `talos-reconciler run --help` of the build under test.
std::string RunHelp();
// A command block of the manual (README.md and docs/, tests/support/manual_pages.h; the Helm
// blocks are in docs/helm.md) that the tests run: a ```sh block right after a line
//   <!-- helm-test expects="Kind/name Kind/name ..." -->
// Every `helm` line of it is run (install and upgrade with --dry-run=client), and the objects
// that its `helm template` lines render together must include each expected one.
struct ManualHelmBlock {
  std::string where;                  // "docs/helm.md:<line of the marker>", for messages
  std::vector<std::string> expects;   // "Deployment/talos-reconciler", ...
  std::vector<std::string> commands;  // the block's `helm …` lines
};
// Every marked block of every page of the manual, in order.
std::vector<ManualHelmBlock> ManualHelmBlocks();
// The lines of ```sh blocks of the manual that start with `helm ` but are in no marked block,
// as "<page>:<line>: <command>" (each should be tested, so: none).
std::vector<std::string> UnmarkedManualHelmCommands();

}  // namespace tr::chart
