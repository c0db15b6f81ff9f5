#include "reconciler/clients/kube/tls_tickets.h"

namespace tr::reconciler::kube {
namespace {

// A server sends two tickets after a full handshake (OpenSSL's default) and one after each
// resumption; a few in hand cover connections opened together.
constexpr size_t kTicketsHeld = 4;

int TicketsIndex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

TlsTickets* TicketsOf(const SSL* ssl) {
  return static_cast<TlsTickets*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), TicketsIndex()));
}

}  // namespace

TlsTickets::~TlsTickets() {
  MutexLock lock(mu_);
  for (SSL_SESSION* session : tickets_) SSL_SESSION_free(session);
}

void TlsTickets::Attach(SSL_CTX* ctx) {
  SSL_CTX_set_ex_data(ctx, TicketsIndex(), this);
  // A client's cache: OpenSSL hands each new session to the callback and keeps none itself.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, &TlsTickets::OnNewSession);
  SSL_CTX_set_info_callback(ctx, &TlsTickets::OnInfo);
}

TlsTickets::Handshakes TlsTickets::handshakes() const {
  MutexLock lock(mu_);
  return handshakes_;
}

int TlsTickets::OnNewSession(SSL* ssl, SSL_SESSION* session) {
  TlsTickets* tickets = TicketsOf(ssl);
  if (tickets == nullptr || SSL_SESSION_is_resumable(session) != 1) return 0;
  tickets->Keep(session);
  return 1;  // the reference is ours now
}

// httplib makes the connection's SSL and calls SSL_connect with no hook between the two, so the
// ticket is given at the start of the handshake: OpenSSL calls this before it writes its
// ClientHello, which is where the session it holds is offered.
void TlsTickets::OnInfo(const SSL* ssl, int where, int /*ret*/) {
  if (SSL_is_server(ssl) == 1) return;
  TlsTickets* tickets = TicketsOf(ssl);
  if (tickets == nullptr) return;
  if ((where & SSL_CB_HANDSHAKE_START) != 0 && SSL_in_before(ssl) == 1) {
    if (SSL_SESSION* session = tickets->Take()) {
      SSL_set_session(const_cast<SSL*>(ssl), session);  // takes its own reference
      SSL_SESSION_free(session);
    }
  }
  if ((where & SSL_CB_HANDSHAKE_DONE) != 0) tickets->Count(SSL_session_reused(ssl) == 1);
}

void TlsTickets::Keep(SSL_SESSION* session) {
  MutexLock lock(mu_);
  tickets_.push_back(session);
  if (tickets_.size() > kTicketsHeld) {
    SSL_SESSION_free(tickets_.front());
    tickets_.pop_front();
  }
}

SSL_SESSION* TlsTickets::Take() {
  MutexLock lock(mu_);
  if (tickets_.empty()) return nullptr;
  SSL_SESSION* newest = tickets_.back();
  tickets_.pop_back();
  return newest;
}

void TlsTickets::Count(bool resumed) {
  MutexLock lock(mu_);
  ++(resumed ? handshakes_.resumed : handshakes_.full);
}

}  // namespace tr::reconciler::kube
