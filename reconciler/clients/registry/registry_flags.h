// The settings of the installer registry whose release tags join the release catalog
// (`--installer-registry*`): registered and checked here; Finish makes the options
// ListRegistryTags and its release source take.
//
// Values only; thread-compatible.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "reconciler/clients/registry/installer_tags.h"

namespace tr::reconciler::registry {

struct InstallerRegistryFlags {
  std::string url;                         // http(s)://host[:port]/<name>; empty: none
  std::filesystem::path credentials_file;  // one line username:password
  std::filesystem::path ca_file;
  bool allow_insecure_http = false;  // credentials to an http:// registry
  std::chrono::milliseconds timeout{10'000};
  std::chrono::seconds ttl{3600};

  void AddFlags(CLI::App& cmd);
  // The registry's options; nullopt without --installer-registry. InvalidArgument naming the
  // flag: a URL or credentials file ParseInstallerRegistry refuses, credentials over http://
  // without --installer-registry-allow-insecure-http, a timeout or TTL out of range.
  absl::StatusOr<std::optional<InstallerRegistryOptions>> Finish() const;
};

}  // namespace tr::reconciler::registry
