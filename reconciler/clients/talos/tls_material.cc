#include "reconciler/clients/talos/tls_material.h"

#include <fcntl.h>
#include <netdb.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "fmt/format.h"

namespace tr::reconciler::talos {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Certificate = std::unique_ptr<X509, X509Free>;
using PrivateKey = std::unique_ptr<EVP_PKEY, KeyFree>;

std::unique_ptr<BIO, BioFree> Reader(const std::string& pem) {
  return std::unique_ptr<BIO, BioFree>(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// No passphrase callback: an encrypted key is refused instead of prompting on a terminal.
int NoPassphrase(char*, int, int, void*) { return 0; }

Certificate ReadCertificate(BIO* in) {
  return Certificate(PEM_read_bio_X509(in, nullptr, NoPassphrase, nullptr));
}

absl::Status Invalid(std::string_view field, std::string_view why) {
  ERR_clear_error();  // OpenSSL's queue would otherwise leak into an unrelated later error
  return absl::InvalidArgumentError(fmt::format("{}: {}", field, why));
}

absl::Status Stopped() {
  ERR_clear_error();
  return absl::CancelledError("stopped while diagnosing the TLS handshake");
}

struct CtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
struct SslFree {
  void operator()(SSL* s) const { SSL_free(s); }
};

// A socket closed when it goes out of scope.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// A TCP connection to `endpoint` within `timeout`, blocking afterwards with `timeout` on every
// read and write; -1 when none could be made. `stop` shuts the socket down, which ends the
// connect's poll and any read or write blocked on it (Linux).
int Connect(const Endpoint& endpoint, std::chrono::milliseconds timeout,
            const std::stop_token& stop) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(endpoint.host.c_str(), std::to_string(endpoint.port).c_str(), &hints, &found) !=
      0) {
    return -1;
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, ::freeaddrinfo);
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  std::stop_callback interrupt(stop, [fd] { ::shutdown(fd, SHUT_RDWR); });
  pollfd wait{fd, POLLOUT, 0};
  int error = 0;
  socklen_t length = sizeof(error);
  const bool connected =
      (::connect(fd, found->ai_addr, found->ai_addrlen) == 0 ||
       (errno == EINPROGRESS && ::poll(&wait, 1, static_cast<int>(timeout.count())) == 1 &&
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0));
  const timeval limit{static_cast<time_t>(timeout.count() / 1000),
                      static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  if (!connected || ::fcntl(fd, F_SETFL, 0) != 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit)) != 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A client context that presents `crt` and trusts only `ca`; null when the material does not
// load (CheckTlsMaterial names why).
std::unique_ptr<SSL_CTX, CtxFree> ClientContext(const TalosContext& context) {
  std::unique_ptr<SSL_CTX, CtxFree> ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return nullptr;
  auto ca_in = Reader(context.ca_pem);
  for (Certificate ca = ReadCertificate(ca_in.get()); ca; ca = ReadCertificate(ca_in.get())) {
    X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx.get()), ca.get());
  }
  auto crt_in = Reader(context.crt_pem);
  auto key_in = Reader(context.key_pem);
  const Certificate crt = ReadCertificate(crt_in.get());
  const PrivateKey key(PEM_read_bio_PrivateKey(key_in.get(), nullptr, NoPassphrase, nullptr));
  static constexpr unsigned char kH2[] = {2, 'h', '2'};
  if (!crt || !key || SSL_CTX_use_certificate(ctx.get(), crt.get()) != 1 ||
      SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1 ||
      SSL_CTX_set_alpn_protos(ctx.get(), kH2, sizeof(kH2)) != 0) {
    return nullptr;
  }
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  return ctx;
}

// The node's refusal of the client certificate, if the last TLS error is one (an alert).
bool RefusedClientCertificate(unsigned long error) {
  switch (ERR_GET_REASON(error)) {
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
    case SSL_R_TLSV1_ALERT_ACCESS_DENIED:
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
      return true;
    default:
      return false;
  }
}

absl::Status Refused(const Endpoint& endpoint, unsigned long error) {
  const char* reason = ERR_reason_error_string(error);
  return Invalid("crt", fmt::format("the node at {} refuses this client certificate ({}); is it "
                                    "from another cluster's talosconfig?",
                                    endpoint.Target(), reason != nullptr ? reason : "refused"));
}

}  // namespace

absl::Status CheckTlsMaterial(const TalosContext& context) {
  auto ca_in = Reader(context.ca_pem);
  if (!ca_in || !ReadCertificate(ca_in.get())) {
    return Invalid("ca", "no certificate can be read from it (is the PEM damaged?)");
  }
  auto crt_in = Reader(context.crt_pem);
  const Certificate crt = crt_in ? ReadCertificate(crt_in.get()) : nullptr;
  if (!crt) return Invalid("crt", "not a certificate that can be read (is the PEM damaged?)");
  auto key_in = Reader(context.key_pem);
  const PrivateKey key(
      key_in ? PEM_read_bio_PrivateKey(key_in.get(), nullptr, NoPassphrase, nullptr) : nullptr);
  if (!key) {
    return Invalid("key",
                   "not a private key that can be read (is the PEM damaged, or the key "
                   "encrypted?)");
  }
  if (X509_check_private_key(crt.get(), key.get()) != 1) {
    return Invalid("crt",
                   "the certificate does not belong to key (crt and key come from "
                   "different talosconfigs?)");
  }
  if (X509_cmp_current_time(X509_get0_notAfter(crt.get())) <= 0) {
    return Invalid("crt", "the certificate has expired (talosctl config new makes a new one)");
  }
  if (X509_cmp_current_time(X509_get0_notBefore(crt.get())) >= 0) {
    return Invalid("crt", "the certificate is not valid yet (is the clock right?)");
  }
  ERR_clear_error();
  return absl::OkStatus();
}

absl::StatusOr<std::chrono::system_clock::time_point> CertificateNotAfter(
    const std::string& crt_pem) {
  auto in = Reader(crt_pem);
  const Certificate crt = in ? ReadCertificate(in.get()) : nullptr;
  if (!crt) return Invalid("crt", "not a certificate that can be read (is the PEM damaged?)");
  // The difference from the epoch, in days and seconds: no time zone, no calendar of ours.
  std::unique_ptr<ASN1_TIME, decltype(&ASN1_TIME_free)> epoch(ASN1_TIME_set(nullptr, 0),
                                                              ASN1_TIME_free);
  int days = 0;
  int seconds = 0;
  if (!epoch || ASN1_TIME_diff(&days, &seconds, epoch.get(), X509_get0_notAfter(crt.get())) != 1) {
    return Invalid("crt", "its notAfter cannot be read");
  }
  ERR_clear_error();
  return std::chrono::system_clock::time_point(std::chrono::seconds(int64_t{days} * 86400 + seconds));
}

absl::Status DiagnoseHandshake(const TalosContext& context, const Endpoint& endpoint,
                               std::chrono::milliseconds timeout, std::stop_token stop) {
  const std::unique_ptr<SSL_CTX, CtxFree> ctx = ClientContext(context);
  const Socket socket(ctx ? Connect(endpoint, timeout, stop) : -1);
  // Runs at once when the stop came while connecting.
  std::stop_callback interrupt(stop, [&socket] {
    if (socket.fd() >= 0) ::shutdown(socket.fd(), SHUT_RDWR);
  });
  const std::unique_ptr<SSL, SslFree> ssl(socket.fd() >= 0 ? SSL_new(ctx.get()) : nullptr);
  if (stop.stop_requested()) return Stopped();
  if (!ssl || SSL_set_fd(ssl.get(), socket.fd()) != 1) {
    ERR_clear_error();
    return absl::OkStatus();  // nothing to say about the material
  }
  const bool handshake = SSL_connect(ssl.get()) == 1;
  if (stop.stop_requested()) return Stopped();
  if (!handshake) {
    const long verify = SSL_get_verify_result(ssl.get());
    if (verify != X509_V_OK) {
      return Invalid("ca", fmt::format("the certificate of the node at {} is not signed by it "
                                       "({}); is it another cluster's CA?",
                                       endpoint.Target(), X509_verify_cert_error_string(verify)));
    }
    const unsigned long error = ERR_peek_last_error();
    if (RefusedClientCertificate(error)) return Refused(endpoint, error);
    ERR_clear_error();
    return absl::OkStatus();
  }
  // TLS 1.3 servers judge the client certificate after the client's handshake is done: their
  // refusal arrives as an alert on the first read. A gRPC server answers the HTTP/2 preface
  // with its SETTINGS frame.
  static constexpr char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0";
  char byte = 0;
  if (SSL_write(ssl.get(), kPreface, sizeof(kPreface) - 1) <= 0) {
    ERR_clear_error();
    return absl::OkStatus();
  }
  const int read = SSL_read(ssl.get(), &byte, 1);
  if (stop.stop_requested()) return Stopped();
  const int outcome = SSL_get_error(ssl.get(), read);
  const unsigned long error = ERR_peek_last_error();
  if (read <= 0 && RefusedClientCertificate(error)) return Refused(endpoint, error);
  // A gRPC C++ server sends no alert: it closes the connection as soon as the handshake it
  // accepted yields a peer it does not (no HTTP/2 byte comes first).
  const bool closed =
      outcome == SSL_ERROR_ZERO_RETURN ||
      (outcome == SSL_ERROR_SSL && ERR_GET_REASON(error) == SSL_R_UNEXPECTED_EOF_WHILE_READING);
  ERR_clear_error();
  if (read <= 0 && closed) {
    return Invalid("crt", fmt::format("the node at {} closes the connection right after the TLS "
                                      "handshake: it refuses this client certificate; is it "
                                      "from another cluster's talosconfig?",
                                      endpoint.Target()));
  }
  return absl::OkStatus();
}

}  // namespace tr::reconciler::talos
