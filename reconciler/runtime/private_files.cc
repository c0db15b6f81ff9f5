#include "reconciler/runtime/private_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "fmt/format.h"

namespace tr::reconciler {

absl::Status MakePrivateDirectory(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec) {
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, ec);
  }
  if (ec) {
    return absl::InvalidArgumentError(
        fmt::format("cannot make the private directory {}: {}", dir.string(), ec.message()));
  }
  return absl::OkStatus();
}

absl::Status MakeStateDirectory(const std::filesystem::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid != ::geteuid()) {
    return absl::OkStatus();  // not ours to chmod
  }
  return MakePrivateDirectory(dir);
}

absl::Status CreatePrivateFile(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  // fchmod: an existing file keeps its old mode through open.
  if (fd < 0 || ::fchmod(fd, 0600) != 0) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
    return absl::InternalError(
        fmt::format("cannot create {}: {}", file.string(), std::strerror(error)));
  }
  ::close(fd);
  return absl::OkStatus();
}

}  // namespace tr::reconciler
