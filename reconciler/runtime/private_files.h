// Files and directories only this process's user may read: the state directory, etcd
// snapshots (a whole cluster's secrets) and the notification spool. Made so when created, not
// fixed afterwards, so no other user ever gets a window to open them.
//
// Thread-safe (plain file-system calls).
#pragma once

#include <filesystem>

#include "absl/status/status.h"

namespace tr::reconciler {

// Creates `dir` (and missing parents) and makes it 0700. InvalidArgument naming the directory
// when it cannot be created or its mode not set.
absl::Status MakePrivateDirectory(const std::filesystem::path& dir);

// The state directory: as MakePrivateDirectory, but an existing directory another user owns
// keeps its mode (a volume root, as Kubernetes' emptyDir with fsGroup makes it); the
// directories made inside it for secrets are private all the same.
absl::Status MakeStateDirectory(const std::filesystem::path& dir);

// Creates `file` empty with mode 0600, or truncates it and sets that mode; a writer that
// opens it afterwards keeps the mode. Internal naming the file when that fails.
absl::Status CreatePrivateFile(const std::filesystem::path& file);

}  // namespace tr::reconciler
