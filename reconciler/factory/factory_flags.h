// The Image Factory settings of `run` (`--image-factory*`): registered and checked here;
// Finish makes the options the factory client takes.
//
// Values only; thread-compatible.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "reconciler/factory/image_factory.h"

namespace tr::reconciler::factory {

struct ImageFactoryFlags {
  std::string url;  // http(s)://host[:port]; empty: none (profiles may still name theirs)
  std::filesystem::path ca_file;
  std::chrono::milliseconds timeout{10'000};
  std::chrono::seconds ttl{3600};

  void AddFlags(CLI::App& cmd);
  // The options of every factory asked (the flag's, and those profiles name: `origin` is the
  // flag's, empty without one). InvalidArgument naming the flag: a URL that is not
  // http(s)://host[:port], a timeout or TTL out of range.
  absl::StatusOr<ImageFactoryOptions> Finish() const;
};

}  // namespace tr::reconciler::factory
