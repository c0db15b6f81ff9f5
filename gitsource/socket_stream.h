// Internal to gitsource: the TCP stream libgit2 uses for git:// and http(s):// (TLS is
// layered on top of it by libgit2), registered process-wide in place of libgit2's own.
//
// libgit2 1.5's socket stream blocks without a timeout, so a server that accepts and then
// never speaks would hang a poll forever. This one resolves, connects, reads and writes
// with non-blocking sockets and waits through the thread's current NetworkOperation, so the
// operation's deadline and cancellation always fire. Outside any operation (which our code
// never does) a conservative five-minute deadline applies to each call.
//
// Writes are gathered and sent at 64 KiB, before a read and at close: libgit2 writes a pack to
// git:// a few bytes at a time.
//
// Thread-safety: each stream is used by one thread; registration is done once.
#pragma once

namespace tr::gitsource {

// Registers the stream with git_stream_register (GIT_STREAM_STANDARD). Call once, after
// git_libgit2_init.
void RegisterDeadlineSocketStream();

}  // namespace tr::gitsource
