#include "gitsource/remote_client.h"

#include <git2/sys/transport.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "fmt/format.h"
#include "gitsource/libgit2_util.h"
#include "gitsource/network_operation.h"
#include "gitsource/push_pack.h"
#include "gitsource/ssh_transport.h"
#include "gitsource/status_refspec.h"

namespace tr::gitsource {
namespace {

constexpr std::size_t kSecretFileLimit = 64 * 1024;

// What libgit2's callbacks of one operation need; passed as their payload.
struct CallbackContext {
  const RemoteConfig* config = nullptr;
  std::uint64_t max_fetch_bytes = 0;  // the config's, or a caller's smaller cap
  const RemoteUrl* url = nullptr;
  NetworkOperation* op = nullptr;
  SshSettings ssh;
  git_smart_subtransport_definition ssh_definition{NewSshSubtransport, 0, &ssh};
  int credential_requests = 0;
  // Push only.
  git_repository* repo = nullptr;
  const PushRequest* push = nullptr;
  std::string push_rejection;
};

absl::StatusOr<std::string> ReadSecretFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::UnauthenticatedError(fmt::format("cannot read {}", path.string()));
  std::string secret;
  secret.resize(kSecretFileLimit + 1);
  in.read(secret.data(), static_cast<std::streamsize>(secret.size()));
  secret.resize(static_cast<std::size_t>(in.gcount()));
  if (secret.size() > kSecretFileLimit) {
    return absl::UnauthenticatedError(fmt::format("{} is too large", path.string()));
  }
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r' ||
                             secret.back() == ' ' || secret.back() == '\t')) {
    secret.pop_back();
  }
  if (secret.empty()) return absl::UnauthenticatedError(fmt::format("{} is empty", path.string()));
  return secret;
}

int FailCredentials(CallbackContext& ctx, std::string why) {
  git_error_set_str(GIT_ERROR_HTTP, why.c_str());
  ctx.op->RecordFailure(NetworkFailure::kAuthenticationFailed, std::move(why));
  return GIT_EAUTH;
}

int AcquireCredentials(git_credential** out, const char* /*url*/, const char* user_from_url,
                       unsigned int allowed, void* payload) {
  auto& ctx = *static_cast<CallbackContext*>(payload);
  const RemoteAuth& auth = ctx.config->auth;
  if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) == 0) {
    return FailCredentials(ctx, "the server asks for an authentication method we do not offer");
  }
  if (++ctx.credential_requests > 1) {
    return FailCredentials(ctx, "the server rejected the configured credentials");
  }
  if (ctx.url->transport == Transport::kHttp && !auth.allow_insecure_http) {
    return FailCredentials(ctx, "refusing to send credentials over plain http://");
  }
  const std::filesystem::path& file =
      !auth.token_file.empty() ? auth.token_file : auth.password_file;
  if (file.empty()) {
    return FailCredentials(ctx, "the server requires credentials and none are configured");
  }
  absl::StatusOr<std::string> secret = ReadSecretFile(file);
  if (!secret.ok()) return FailCredentials(ctx, std::string(secret.status().message()));
  ctx.op->AddSecret(*secret);
  std::string user = auth.username;
  if (user.empty() && user_from_url != nullptr) user = user_from_url;
  if (user.empty()) user = "git";
  return git_credential_userpass_plaintext_new(out, user.c_str(), secret->c_str());
}

int MakeTransport(git_transport** out, git_remote* owner, void* payload) {
  auto& ctx = *static_cast<CallbackContext*>(payload);
  if (ctx.url->transport == Transport::kSsh) {
    return git_transport_smart(out, owner, &ctx.ssh_definition);
  }
  return git_transport_new(out, owner, git_remote_url(owner));
}

int TransferProgress(const git_indexer_progress* stats, void* payload) {
  auto& ctx = *static_cast<CallbackContext*>(payload);
  if (stats->received_bytes > ctx.max_fetch_bytes) {
    ctx.op->RecordFailure(NetworkFailure::kFetchTooLarge,
                          fmt::format("the fetch exceeded the cap of {} bytes", ctx.max_fetch_bytes));
    return -1;
  }
  return ctx.op->CheckAlive() ? 0 : -1;
}

int SidebandProgress(const char* /*text*/, int /*length*/, void* payload) {
  return static_cast<CallbackContext*>(payload)->op->CheckAlive() ? 0 : -1;
}

int PushProgress(unsigned int /*current*/, unsigned int /*total*/, size_t /*bytes*/,
                 void* payload) {
  return static_cast<CallbackContext*>(payload)->op->CheckAlive() ? 0 : -1;
}

// The last check before a push goes on the wire: one update, of the status branch, from
// the tip we built on, to a descendant of it.
int GuardPush(const git_push_update** updates, size_t count, void* payload) {
  auto& ctx = *static_cast<CallbackContext*>(payload);
  const PushRequest& push = *ctx.push;
  const std::string remote_ref = fmt::format("refs/heads/{}", push.status_branch);
  if (count != 1 || remote_ref != updates[0]->dst_refname ||
      !git_oid_equal(&updates[0]->dst, &push.new_commit)) {
    git_error_set_str(GIT_ERROR_INVALID, "refusing a push that is not of the status branch");
    return -1;
  }
  const git_oid& remote_now = updates[0]->src;
  const bool expected = push.expected_remote.has_value()
                            ? git_oid_equal(&remote_now, &*push.expected_remote) != 0
                            : git_oid_is_zero(&remote_now) != 0;
  if (!expected) {
    ctx.push_rejection = "the remote status branch moved";
    git_error_set_str(GIT_ERROR_REFERENCE, "the remote status branch moved");
    return -1;
  }
  if (!push.force_with_lease && !git_oid_is_zero(&remote_now) &&
      !git_oid_equal(&remote_now, &push.new_commit) &&
      git_graph_descendant_of(ctx.repo, &push.new_commit, &remote_now) != 1) {
    git_error_set_str(GIT_ERROR_REFERENCE, "refusing a non-fast-forward status update");
    return -1;
  }
  return 0;
}

int PushUpdateReference(const char* refname, const char* status, void* payload) {
  auto& ctx = *static_cast<CallbackContext*>(payload);
  if (status != nullptr) ctx.push_rejection = fmt::format("{}: {}", refname, status);
  return 0;
}

git_remote_callbacks Callbacks(CallbackContext& ctx) {
  git_remote_callbacks callbacks = GIT_REMOTE_CALLBACKS_INIT;
  callbacks.credentials = AcquireCredentials;
  callbacks.transport = MakeTransport;
  callbacks.transfer_progress = TransferProgress;
  callbacks.sideband_progress = SidebandProgress;
  callbacks.push_transfer_progress = PushProgress;
  callbacks.payload = &ctx;
  return callbacks;
}

void InitContext(CallbackContext& ctx, const RemoteConfig& config, const RemoteUrl& url,
                 NetworkOperation& op) {
  ctx.config = &config;
  ctx.max_fetch_bytes = config.limits.max_fetch_bytes;
  ctx.url = &url;
  ctx.op = &op;
  ctx.ssh.ssh_command = config.auth.ssh_command;
  ctx.ssh.key_file = config.auth.ssh_key_file;
  ctx.ssh.known_hosts_file = config.auth.known_hosts_file;
  if (!config.auth.username.empty()) ctx.ssh.default_user = config.auth.username;
}

std::optional<git_oid> FindAdvertised(git_remote* remote, const std::string& ref) {
  const git_remote_head** heads = nullptr;
  size_t count = 0;
  if (git_remote_ls(&heads, &count, remote) != 0) return std::nullopt;
  for (size_t i = 0; i < count; ++i) {
    if (ref == heads[i]->name) return heads[i]->oid;
  }
  return std::nullopt;
}

bool HasObject(git_repository* repo, const git_oid& id) {
  git_odb* odb = nullptr;
  if (git_repository_odb(&odb, repo) != 0) return false;
  const bool exists = git_odb_exists(odb, &id) == 1;
  git_odb_free(odb);
  return exists;
}

// Downloads what `refspec` names over the connected `remote` (no tags, no FETCH_HEAD).
absl::Status Download(git_remote* remote, std::string refspec, CallbackContext& ctx) {
  git_fetch_options fetch = GIT_FETCH_OPTIONS_INIT;
  fetch.callbacks = Callbacks(ctx);
  fetch.update_fetchhead = 0;
  fetch.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
  fetch.prune = GIT_FETCH_NO_PRUNE;
  char* specs[] = {refspec.data()};
  const git_strarray refspecs = {specs, 1};
  if (int rc = git_remote_download(remote, &refspecs, &fetch); rc < 0) {
    return GitError(rc, fmt::format("fetch {} from {}", refspec.substr(1, refspec.find(':') - 1),
                                    UrlForDisplay(git_remote_url(remote))));
  }
  return absl::OkStatus();
}

// An unnamed remote for `url`. The repository's url.*.insteadOf settings are not applied:
// the configured URL is the one used.
absl::StatusOr<RemotePtr> AnonymousRemote(git_repository* repo, const std::string& url,
                                          const std::string& display) {
  git_remote_create_options options = GIT_REMOTE_CREATE_OPTIONS_INIT;
  options.repository = repo;
  options.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
  git_remote* raw = nullptr;
  if (int rc = git_remote_create_with_opts(&raw, url.c_str(), &options); rc < 0) {
    return GitError(rc, fmt::format("use remote {}", display));
  }
  return RemotePtr(raw);
}

}  // namespace

absl::StatusOr<RemoteClient> RemoteClient::Create(RemoteConfig config, Env& env) {
  absl::StatusOr<RemoteUrl> url = ParseRemoteUrl(config.url);
  if (!url.ok()) return url.status();
  const RemoteAuth& auth = config.auth;
  if (!auth.token_file.empty() && !auth.password_file.empty()) {
    return absl::InvalidArgumentError("set either a token file or a password file, not both");
  }
  if (url->transport == Transport::kSsh && auth.known_hosts_file.empty()) {
    return absl::InvalidArgumentError("an ssh remote needs a known_hosts file");
  }
  for (const std::filesystem::path& file : {auth.ssh_key_file, auth.known_hosts_file}) {
    if (file.string().find_first_of("\"\n\r") != std::string::npos) {
      return absl::InvalidArgumentError("ssh file paths cannot contain quotes or newlines");
    }
  }
  if (config.limits.operation_timeout <= std::chrono::milliseconds(0)) {
    return absl::InvalidArgumentError("the network operation timeout must be positive");
  }
  EnsureLibgit2();
  return RemoteClient(std::move(config), *std::move(url), env);
}

absl::StatusOr<SyncResult> RemoteClient::Sync(git_repository* repo, const std::string& remote_ref,
                                              std::stop_token stop,
                                              std::uint64_t max_fetch_bytes) const {
  NetworkOperation op(config_.limits.operation_timeout, std::move(stop), *env_);
  CallbackContext ctx;
  InitContext(ctx, config_, url_, op);
  if (max_fetch_bytes != 0) ctx.max_fetch_bytes = std::min(ctx.max_fetch_bytes, max_fetch_bytes);
  absl::StatusOr<RemotePtr> remote = AnonymousRemote(repo, config_.url, display_url());
  if (!remote.ok()) return remote.status();
  git_remote_connect_options connect = GIT_REMOTE_CONNECT_OPTIONS_INIT;
  connect.callbacks = Callbacks(ctx);
  if (int rc = git_remote_connect_ext(remote->get(), GIT_DIRECTION_FETCH, &connect); rc < 0) {
    return GitError(rc, fmt::format("connect to {}", display_url()));
  }
  SyncResult result;
  result.remote_tip = FindAdvertised(remote->get(), remote_ref);
  if (!result.remote_tip.has_value()) return result;
  if (!HasObject(repo, *result.remote_tip)) {
    const std::string refspec = fmt::format("+{0}:{0}", remote_ref);  // no ref is updated
    if (absl::Status s = Download(remote->get(), refspec, ctx); !s.ok()) return s;
    result.fetched = true;
    result.received_bytes = git_remote_stats(remote->get())->received_bytes;
  }
  git_remote_disconnect(remote->get());
  return result;
}

absl::StatusOr<PushOutcome> RemoteClient::Push(git_repository* repo, const PushRequest& request,
                                               std::stop_token stop) const {
  const absl::Status refspec_ok =
      request.force_with_lease
          ? CheckProposalPushRefspec(request.refspec, request.status_branch,
                                     request.desired_branch, request.proposal_status_branch)
          : CheckStatusPushRefspec(request.refspec, request.status_branch, request.desired_branch);
  if (!refspec_ok.ok()) return refspec_ok;
  if (absl::Status s = PackWithoutDeltas(repo); !s.ok()) return s;
  NetworkOperation op(config_.limits.operation_timeout, std::move(stop), *env_);
  CallbackContext ctx;
  InitContext(ctx, config_, url_, op);
  ctx.repo = repo;
  ctx.push = &request;
  absl::StatusOr<RemotePtr> remote = AnonymousRemote(repo, config_.url, display_url());
  if (!remote.ok()) return remote.status();
  git_push_options options = GIT_PUSH_OPTIONS_INIT;
  options.callbacks = Callbacks(ctx);
  options.callbacks.push_negotiation = GuardPush;
  options.callbacks.push_update_reference = PushUpdateReference;
  std::string refspec = request.refspec;
  char* specs[] = {refspec.data()};
  const git_strarray refspecs = {specs, 1};
  const int rc = git_remote_push(remote->get(), &refspecs, &options);
  if (!ctx.push_rejection.empty() && op.failure() == NetworkFailure::kNone) {
    return PushOutcome{false, ctx.push_rejection};
  }
  if (rc == GIT_ENONFASTFORWARD && op.failure() == NetworkFailure::kNone) {
    return PushOutcome{false, "the remote status branch has commits we do not have"};
  }
  if (rc < 0) return GitError(rc, fmt::format("push to {}", display_url()));
  return PushOutcome{true, {}};
}

}  // namespace tr::gitsource
