// Where a profile's Talos credentials are: one directory per cluster
// (<dir>/<spec.credentials>/talosconfig, a mounted Secret each), or one talosconfig file whose
// context named spec.credentials is the cluster's (talosctl's --talosconfig with contexts).
//
// Values only; thread-compatible.
#pragma once

#include <filesystem>

namespace tr::reconciler {

struct TalosCredentials {
  std::filesystem::path dir;
  std::filesystem::path talosconfig;  // when set, `dir` is not used

  bool empty() const { return dir.empty() && talosconfig.empty(); }
};

}  // namespace tr::reconciler
