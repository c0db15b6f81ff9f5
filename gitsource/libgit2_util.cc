#include "gitsource/libgit2_util.h"

#include <mutex>

#include "fmt/format.h"
#include "gitsource/config.h"
#include "gitsource/network_operation.h"
#include "gitsource/socket_stream.h"

namespace tr::gitsource {
namespace {

std::once_flag init_once;
std::mutex settings_mu;
bool configured = false;

void InitLibgit2Once() {
  std::call_once(init_once, [] {
    git_libgit2_init();
    RegisterDeadlineSocketStream();
  });
}

absl::Status ApplySettings(const Libgit2Settings& s) {
  const auto set = [](int rc, std::string_view what) -> absl::Status {
    if (rc == 0) return absl::OkStatus();
    const git_error* e = git_error_last();
    return absl::InvalidArgumentError(
        fmt::format("libgit2 refused {}: {}", what, e != nullptr ? e->message : "unknown"));
  };
  absl::Status status =
      set(git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, static_cast<ssize_t>(s.object_cache_bytes)),
          "the object cache size");
  if (status.ok())
    status = set(git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE, s.mwindow_size), "mwindow size");
  if (status.ok())
    status = set(git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT, s.mwindow_mapped_limit),
                 "the mapped-window limit");
  if (status.ok())
    status = set(git_libgit2_opts(GIT_OPT_SET_MWINDOW_FILE_LIMIT, s.mwindow_file_limit),
                 "the pack file limit");
  if (status.ok())
    status = set(git_libgit2_opts(GIT_OPT_SET_PACK_MAX_OBJECT_SIZE, s.pack_max_object_bytes),
                 "the pack object size cap");
  if (status.ok() && !s.https_ca_file.empty()) {
    status = set(git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, s.https_ca_file.c_str(),
                                  static_cast<const char*>(nullptr)),
                 fmt::format("the CA file {}", s.https_ca_file.string()));
  }
  return status;
}

}  // namespace

absl::Status ConfigureLibgit2(const Libgit2Settings& settings) {
  InitLibgit2Once();
  std::lock_guard lock(settings_mu);
  configured = true;
  return ApplySettings(settings);
}

void EnsureLibgit2() {
  InitLibgit2Once();
  std::lock_guard lock(settings_mu);
  if (!configured) {
    configured = true;
    (void)ApplySettings(Libgit2Settings{});  // the defaults are always accepted
  }
}

std::string OidHex(const git_oid& oid) {
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &oid);
  return hex;
}

absl::Status GitError(int code, std::string_view action) {
  const git_error* last = git_error_last();
  std::string message = last != nullptr && last->message != nullptr ? last->message : "";
  const int klass = last != nullptr ? last->klass : GIT_ERROR_NONE;
  NetworkOperation* op = NetworkOperation::Current();
  if (op != nullptr) message = op->Redact(std::move(message));
  if (message.empty()) message = fmt::format("libgit2 error {}", code);
  if (op != nullptr && op->failure() != NetworkFailure::kNone) {
    const std::string detail = op->Redact(op->failure_detail());
    const std::string text = fmt::format("{}: {}", action, detail.empty() ? message : detail);
    switch (op->failure()) {
      case NetworkFailure::kDeadlineExceeded:
        return absl::DeadlineExceededError(text);
      case NetworkFailure::kCancelled:
        return absl::CancelledError(text);
      case NetworkFailure::kFetchTooLarge:
        return absl::ResourceExhaustedError(text);
      case NetworkFailure::kHostKeyRejected:
        return absl::PermissionDeniedError(text);
      case NetworkFailure::kAuthenticationFailed:
        return absl::UnauthenticatedError(text);
      case NetworkFailure::kNone:
        break;
    }
  }
  const std::string text = fmt::format("{}: {}", action, message);
  switch (code) {
    case GIT_ENOTFOUND:
      return absl::NotFoundError(text);
    case GIT_EAUTH:
      return absl::UnauthenticatedError(text);
    case GIT_ECERTIFICATE:
      return absl::PermissionDeniedError(text);
    case GIT_ELOCKED:
      return absl::UnavailableError(text);
    case GIT_EEXISTS:
      return absl::AlreadyExistsError(text);
    default:
      break;
  }
  switch (klass) {
    case GIT_ERROR_NET:
    case GIT_ERROR_SSH:
    case GIT_ERROR_HTTP:
    case GIT_ERROR_SSL:
    case GIT_ERROR_OS:
    case GIT_ERROR_CALLBACK:
      return absl::UnavailableError(text);
    case GIT_ERROR_ODB:
    case GIT_ERROR_ZLIB:
    case GIT_ERROR_INDEXER:
    case GIT_ERROR_OBJECT:
      return absl::DataLossError(text);
    default:
      return absl::InternalError(text);
  }
}

absl::StatusOr<CommitPtr> LookupCommit(git_repository* repo, const git_oid& id) {
  git_commit* raw = nullptr;
  if (int rc = git_commit_lookup(&raw, repo, &id); rc < 0) {
    return GitError(rc, fmt::format("find commit {}", OidHex(id)));
  }
  return CommitPtr(raw);
}

}  // namespace tr::gitsource
