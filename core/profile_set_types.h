// A profile repository's files and what they decode to as a set (profile_set.h decodes one):
// valid profiles, invalid ones with their problems, the repository's defaults, support matrix
// and release catalog. Here, apart from the decoding that assembles it, so that each decoder
// can use it without the others.
//
// Thread-compatible.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/profile.h"
#include "core/support_matrix.h"

namespace tr::core {

struct SourceFile {
  std::string path;        // repository-relative, e.g. "clusters/prod-eu-1.yaml"
  std::string content;     // raw bytes as stored
  bool oversized = false;  // the reader refused to read it past its size cap
};

struct ValidationOptions {
  // Tells whether an IANA time-zone name exists. Unset: only the name's syntax is checked.
  std::function<bool(std::string_view)> is_known_timezone;
  // The number of shards (`--shards`) spec.shard must be below. 0: unknown; 0 to 1023 pass.
  int shards = 0;
};

// A profile file that did not decode or validate.
struct InvalidProfile {
  std::string file;
  std::string cluster;  // from the file name ("clusters/prod.yaml" -> "prod")
  Diagnostics diagnostics;
};

struct ProfileSet {
  RepositoryDefaults defaults;
  SupportMatrix support_matrix;          // built in, plus reconciler.yaml's rows
  ReleaseCatalog release_catalog;        // built in, plus reconciler.yaml's releases
  std::vector<ClusterProfile> profiles;  // valid ones, sorted by name
  std::vector<InvalidProfile> invalid;   // sorted by file
  Diagnostics defaults_diagnostics;      // errors in reconciler.yaml

  // Whether a profile, valid or not, names `cluster` (defined beside DecodeProfileSet).
  bool Knows(std::string_view cluster) const;
  // The valid profile named `cluster`, or null: a binary search, as a reconcile asks it of
  // every cluster of the fleet.
  const ClusterProfile* Find(std::string_view cluster) const;
};

}  // namespace tr::core
