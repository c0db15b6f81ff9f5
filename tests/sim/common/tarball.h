// A gzip-compressed tar archive holding one regular file, as Talos' Kubeconfig call returns it.
// Pure function; thread-safe.
#pragma once

#include <chrono>
#include <string>

namespace tr::sim {

// ustar archive with `name` (mode 0600) and `content`, gzip-compressed with zlib.
std::string TarGzSingleFile(const std::string& name, const std::string& content,
                            std::chrono::system_clock::time_point mtime);

}  // namespace tr::sim
