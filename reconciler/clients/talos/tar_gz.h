// A small reader for the tar.gz archives the Talos API sends (MachineService/Kubeconfig: one
// file named `kubeconfig`). Supports gzip (zlib) and ustar/GNU/PAX tar headers; extracts regular
// files only. Decompressed size is capped so a hostile archive cannot exhaust memory.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tr::reconciler::talos {

inline constexpr size_t kMaxTarGzBytes = 64 * 1024 * 1024;

// Decompresses gzip data. InvalidArgument when it is not valid gzip or inflates to more than
// `max_bytes`.
absl::StatusOr<std::string> Gunzip(std::string_view gzip, size_t max_bytes = kMaxTarGzBytes);

// The content of the regular file `name` ("kubeconfig" also matches "./kubeconfig") in a tar.gz
// archive. NotFound when the archive has no such file; InvalidArgument when the archive is
// malformed.
absl::StatusOr<std::string> ExtractFileFromTarGz(std::string_view tar_gz, std::string_view name);

}  // namespace tr::reconciler::talos
