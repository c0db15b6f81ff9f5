// `talos-reconciler adopt`: the profile of a running cluster, written from what its nodes run
// now, found through a talosconfig context as talosctl finds one (--talosconfig, else
// $TALOSCONFIG, else ~/.talos/config; --context, else the file's current context). Printed on
// stdout, as `flux export` and `kubectl get -o yaml` print theirs, for clusters/<name>.yaml.
//
// Thread-compatible; blocks on the network.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

namespace tr::reconciler {

struct AdoptOptions {
  std::string cluster;  // metadata.name; empty: the context's name
  std::filesystem::path talosconfig;  // empty: $TALOSCONFIG, else ~/.talos/config
  std::string context;                // empty: the talosconfig's current context
  std::string image;                  // the installer repository to write instead of the nodes'
};

// Prints the profile on `out`; 0. 1 after printing why on `err` (no talosconfig, a context
// name that cannot be spec.credentials, nodes that do not answer or do not agree).
int RunAdopt(const AdoptOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tr::reconciler
