// The TLS session tickets one Kubernetes client got from its API server, shared by the TLS
// contexts of all its connections (the kept-alive one and each watch's): a connection opened
// after one that got a ticket resumes that session (RFC 8446 §2.2) instead of a full handshake,
// so the client neither parses nor verifies the server's certificate chain again, and nobody
// signs. A fleet's first looks after an idle spell open two connections a cluster (the one the
// idle close closed, and the Node watch's): at 1,000 clusters their full handshakes were about
// a twentieth of the daemon's CPU in a rollout (docs/benchmarks.md).
//
// A ticket is offered once (RFC 8446 §C.4: a client should not reuse one); a server sends new
// ones on every connection. A server that sends none, or declines the one offered (it restarted,
// the ticket expired), costs a full handshake, verified as always: the chain and the host are
// only skipped for a session that was verified when it began, with this client's trust.
//
// Thread-safe.
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <deque>

#include "base/mutex.h"

namespace tr::reconciler::kube {

class TlsTickets {
 public:
  struct Handshakes {
    uint64_t full = 0;
    uint64_t resumed = 0;
  };

  TlsTickets() = default;
  ~TlsTickets();
  TlsTickets(const TlsTickets&) = delete;
  TlsTickets& operator=(const TlsTickets&) = delete;

  // The client connections of `ctx` keep the tickets they get here and offer one at their
  // handshake. `ctx` must not make connections after this object is gone.
  void Attach(SSL_CTX* ctx);

  // The handshakes the attached contexts' connections completed, by kind.
  Handshakes handshakes() const;

 private:
  static int OnNewSession(SSL* ssl, SSL_SESSION* session);
  static void OnInfo(const SSL* ssl, int where, int ret);

  void Keep(SSL_SESSION* session);  // takes the reference
  SSL_SESSION* Take();              // the caller's reference; nullptr when none is held
  void Count(bool resumed);

  mutable Mutex mu_;
  std::deque<SSL_SESSION*> tickets_ ABSL_GUARDED_BY(mu_);  // newest last
  Handshakes handshakes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tr::reconciler::kube
