// Internal to gitsource: the ssh transport, a libgit2 smart subtransport that runs the
// OpenSSH client (`ssh … git-upload-pack '<path>'`), as git itself does.
//
// Why not libgit2's built-in libssh2 transport: it blocks on its socket with no timeout and
// checks host keys against ~/.ssh/known_hosts only. Here the pack protocol is still
// libgit2's, but the bytes flow through a socketpair that we wait on through the current
// NetworkOperation, so a deadline or a cancellation kills the client at once. The client
// runs with no user configuration (-F /dev/null), batch mode, no agent, only the configured
// key, and StrictHostKeyChecking=yes against the configured known_hosts file (with the
// global file disabled and UpdateHostKeys=no): unknown and changed host keys are refused and
// nothing is ever learned on first use.
//
// Thread-safety: a transport instance is used by the thread running its operation.
#pragma once

#include <git2.h>
#include <git2/sys/transport.h>

#include <filesystem>
#include <string>

namespace tr::gitsource {

struct SshSettings {
  std::string ssh_command = "ssh";
  std::filesystem::path key_file;          // empty: no key is offered
  std::filesystem::path known_hosts_file;  // required
  std::string default_user = "git";        // when the URL names none
};

// A git_smart_subtransport_cb; `param` is a `const SshSettings*` that outlives the transport.
int NewSshSubtransport(git_smart_subtransport** out, git_transport* owner, void* param);

// Quotes `text` for a POSIX shell, as git does for the remote command.
std::string ShellQuote(const std::string& text);

}  // namespace tr::gitsource
