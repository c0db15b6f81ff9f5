// The Image Factory settings of `run` and `plan` (`--image-factory*`): registered and checked
// here; Finish makes the options the factory client takes.
//
// Values only; thread-compatible.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "reconciler/clients/factory/image_factory.h"

namespace tr::reconciler::factory {

struct ImageFactoryFlags {
  std::string url;  // http(s)://host[:port]; empty: none (profiles may still name theirs)
  std::filesystem::path ca_file;
  std::chrono::milliseconds timeout{10'000};
  std::chrono::seconds ttl{3600};

  // `run`'s: the client flags and --image-factory-ttl (the release catalog's refresh).
  void AddFlags(CLI::App& cmd);
  // `plan`'s: --image-factory, --image-factory-ca-file and --image-factory-timeout, which it
  // needs to resolve schematics; it lists no releases, so no TTL.
  void AddClientFlags(CLI::App& cmd, const std::string& url_help);
  // The options of every factory asked (the flag's, and those profiles name: `origin` is the
  // flag's, empty without one). InvalidArgument naming the flag: a URL that is not
  // http(s)://host[:port], a timeout or TTL out of range.
  absl::StatusOr<ImageFactoryOptions> Finish() const;
};

}  // namespace tr::reconciler::factory
