// Reading a secret (webhook secret, notification key, forge token) from a file, the only way
// the reconciler takes secrets: never from a flag's value, which `ps` shows.
#pragma once

#include <filesystem>
#include <string>

#include "absl/status/statusor.h"

namespace tr {

// The shortest webhook secret accepted: a short HMAC key or GitLab token can be guessed.
inline constexpr size_t kMinWebhookSecretBytes = 16;

// The file's content without trailing newlines. InvalidArgument naming the file (never its
// content) when it cannot be read, is empty, or is shorter than `min_bytes`.
absl::StatusOr<std::string> ReadSecretFile(const std::filesystem::path& path, size_t min_bytes = 1);

}  // namespace tr
