// Decoding of Image Factory schematics (schematic.h) from a profile: inline under
// `spec.talos.schematic` or `spec.nodes[].schematic`, or a reference `{file:
// schematics/<name>.yaml}` to a file of the repository holding the same shape (and nothing
// else: no apiVersion or kind, so a schematic written for the factory can be kept as is).
// Also `spec.talos`'s installer keys: `image`, or `schematic` with `factory`, `platform` and
// `secureboot`. docs/profiles.md lists every rule.
//
// A referenced file is decoded with the same strictness as a profile; its errors name that
// file and their own line:column, and the profile gets one error at the `file:` that named
// it, so a person sees both where the reference is and what is wrong in the file.
//
// Pure; not thread-safe (a SchematicLookup belongs to one profile being decoded).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/decoded.h"
#include "core/diagnostic.h"
#include "core/profile.h"
#include "core/profile_set_types.h"
#include "core/schematic.h"
#include "core/yaml_decode.h"

namespace tr::core {

inline constexpr std::string_view kSchematicsDir = "schematics/";

// The `schematics/*.yaml` files of a snapshot, by path; they point into the snapshot's files.
using SchematicFiles = std::map<std::string, const SourceFile*, std::less<>>;
SchematicFiles CollectSchematicFiles(const std::vector<SourceFile>& files);

// True for "schematics/<name>.yaml" directly in schematics/ (what the snapshot readers read).
bool IsSchematicFilePath(std::string_view path);

// Resolves `{file: ...}` references while one profile is decoded.
struct SchematicLookup {
  const SchematicFiles* files = nullptr;  // nullptr: no schematic files (every file is missing)
  Diagnostics file_diagnostics;           // errors inside referenced files, each file once
  std::set<std::string> reported;         // the files whose errors are already there
};

// A whole schematic file (`customization`, `overlay`); its `file` member is `path`.
Decoded<Schematic> DecodeSchematicFile(std::string_view path, std::string_view content);

// A schematic field: inline, or `{file: schematics/<name>.yaml}` found through `lookup`.
std::optional<Schematic> DecodeSchematicField(const Field& field, SchematicLookup& lookup);

// `spec.talos` minus `version`: exactly one of `image` and `schematic`; `factory`, `platform`
// and `secureboot` only with `schematic`. Sets `profile.talos_image` or `profile.talos_factory`.
void DecodeTalosInstaller(const Field& talos, const MappingReader& reader,
                          SchematicLookup& lookup, ClusterProfile& profile);

}  // namespace tr::core
