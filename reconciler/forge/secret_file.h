// Reading a secret (webhook secret, notification key, forge token) from a file, the only way
// the reconciler takes secrets: never from a flag's value, which `ps` shows.
#pragma once

#include <filesystem>
#include <string>

#include "absl/status/statusor.h"

namespace tr::reconciler::forge {

// The file's content without trailing newlines. InvalidArgument naming the file (never its
// content) when it cannot be read or is empty.
absl::StatusOr<std::string> ReadSecretFile(const std::filesystem::path& path);

}  // namespace tr::reconciler::forge
