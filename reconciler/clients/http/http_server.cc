#include "reconciler/clients/http/http_server.h"

#include <algorithm>
#include <array>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <charconv>
#include <future>
#include <map>
#include <optional>
#include <thread>

#include "base/env.h"
#include "base/thread_name.h"
#include "reconciler/runtime/logging.h"

namespace tr::reconciler::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

namespace {
// Boost 1.74's string_view is boost's own.
std::string_view Std(beast::string_view view) { return {view.data(), view.size()}; }

// ASCII only, as header names and the tokens compared here are.
bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::string Request::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

bool Request::HasHeader(std::string_view name) const {
  for (const auto& header : headers) {
    if (EqualsIgnoreCase(header.first, name)) return true;
  }
  return false;
}

std::string_view RefusalReasonName(RefusalReason reason) {
  switch (reason) {
    case RefusalReason::kConnections: return "connections";
    case RefusalReason::kPeerConnections: return "peer_connections";
    case RefusalReason::kHeadersTooLarge: return "headers_too_large";
    case RefusalReason::kBodyTooLarge: return "too_large";
    case RefusalReason::kBusy: return "busy";
    case RefusalReason::kPeerBusy: return "peer_busy";
    case RefusalReason::kTimeout: return "timeout";
    case RefusalReason::kMalformed: return "malformed";
  }
  return "unknown";
}

ServerLimits ProbeEndpointLimits() {
  ServerLimits limits;
  limits.max_body_bytes = 4 << 10;
  limits.max_bodies_in_flight_bytes = 256 << 10;
  limits.max_connections_per_peer = 16;
  // A kubelet probes liveness and readiness on a new connection each, every few seconds.
  limits.probe_connections = 8;
  return limits;
}

absl::StatusOr<std::pair<std::string, int>> SplitListenAddress(std::string_view listen) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon != std::string_view::npos) {
    const std::string_view digits = listen.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) port = -1;
  }
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError("listen address " + std::string(listen) +
                                      ": want host:port");
  }
  std::string host(listen.substr(0, colon));
  // [::1]:8080 names an IPv6 address in brackets.
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::make_pair(std::move(host), port);
}

// Members are destroyed in reverse order: the event loop (and with it every connection still
// open) goes before the counters the connections give back to.
struct HttpServer::State {
  State(ServerOptions o, Env& e)
      : options(std::move(o)),
        env(e),
        log(ModuleLogger(options.name)),
        refusal_lines(std::chrono::seconds(1), e) {}

  // Counts the refusal and logs it, at most one line per reason a second.
  void Refused(RefusalReason reason, std::string_view peer) {
    if (options.on_refused) options.on_refused(reason);
    const std::string_view name = RefusalReasonName(reason);
    if (auto held_back = refusal_lines.Admit(name)) {
      log->warn("step=refuse peer={} reason={} suppressed={}", LogValue(peer), name, *held_back);
    }
  }

  const ServerOptions options;
  Env& env;
  const std::shared_ptr<spdlog::logger> log;
  LogThrottle refusal_lines;
  // Touched on the loop's thread only.
  std::size_t connections = 0;
  std::size_t probe_connections = 0;  // of those held for probes
  std::map<std::string, std::size_t, std::less<>> per_peer;
  std::size_t bodies_in_flight = 0;
  std::map<std::string, std::size_t, std::less<>> peer_bodies;  // bytes held, by peer

  // What one peer may hold of the bodies in flight.
  std::size_t PeerBodyBudget() const {
    const ServerLimits& limits = options.limits;
    const std::size_t share = limits.max_bodies_in_flight_bytes /
                              std::max<std::size_t>(limits.body_budget_shares, 1);
    return std::max(share, std::min(limits.max_body_bytes, limits.max_bodies_in_flight_bytes));
  }

  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  asio::steady_timer accept_pause{io};
  int port = 0;
  std::thread thread;
};

namespace {

using State = HttpServer::State;
constexpr std::chrono::seconds kLinger{1};
constexpr std::size_t kMaxDrainBytes = 4 << 20;
// A probe (kubelet) sends its request at once; a connection held for probes that does not is
// cut by then, so silent connections cannot keep the probes' places.
constexpr std::chrono::seconds kProbeRequestDeadline{1};
// Chunk extensions carry nothing we read; an honest sender sends none or a few bytes.
constexpr std::size_t kMaxChunkExtensionBytes = 1 << 10;

// Which place a connection holds: none (refused at once), one under max_connections, or one
// of those held for probes.
enum class Place { kNone, kRegular, kProbe };

// One connection, from accept to close. Lives as long as an operation of its own is pending.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(State& state, tcp::socket socket, std::string peer, Place place)
      : state_(state), stream_(std::move(socket)), peer_(std::move(peer)), place_(place) {
    on_chunk_header_ = [](std::uint64_t, beast::string_view extensions, beast::error_code& ec) {
      if (extensions.size() > kMaxChunkExtensionBytes) ec = bhttp::error::bad_chunk_extension;
    };
    if (place_ == Place::kNone) return;
    ++(place_ == Place::kProbe ? state_.probe_connections : state_.connections);
    ++state_.per_peer[peer_];
  }
  ~Connection() {
    ReleaseBody();
    if (place_ == Place::kNone) return;
    --(place_ == Place::kProbe ? state_.probe_connections : state_.connections);
    auto it = state_.per_peer.find(peer_);
    if (it != state_.per_peer.end() && --it->second == 0) state_.per_peer.erase(it);
  }

  void Start() {
    ReadRequest(place_ == Place::kProbe
                    ? std::min<std::chrono::milliseconds>(kProbeRequestDeadline,
                                                          limits().request_deadline)
                    : limits().request_deadline);
  }

  // Answers 503 without reading anything and closes.
  void RefuseAtOnce(RefusalReason reason) {
    Refuse(reason, 503, "too many connections, retry later");
  }

 private:
  const ServerLimits& limits() const { return state_.options.limits; }

  void ReadRequest(std::chrono::milliseconds deadline) {
    request_started_ = state_.env.Now();
    request_deadline_ = deadline;
    // A kept connection waits with no more buffer than the bytes it already sent: the room a
    // large request needed is given back (issue 49, finding 7).
    buffer_.shrink_to_fit();
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(limits().max_header_bytes));
    parser_->body_limit(limits().max_body_bytes);
    parser_->on_chunk_header(on_chunk_header_);
    stream_.expires_after(deadline);
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             [self = shared_from_this()](beast::error_code ec, std::size_t) {
                               self->OnHeader(ec);
                             });
  }

  void OnHeader(beast::error_code ec) {
    if (ec) return Fail(ec);
    if (place_ == Place::kProbe && !IsProbe()) {
      return Refuse(RefusalReason::kConnections, 503, "too many connections, retry later");
    }
    header_fields_ = FieldCount();
    if (header_fields_ > limits().max_header_fields) {
      return Refuse(RefusalReason::kHeadersTooLarge, 431, "too many header fields");
    }
    if (auto busy = ReserveBody()) return Refuse(*busy, 503, "busy, retry later");
    if (EqualsIgnoreCase(Std(parser_->get()[bhttp::field::expect]), "100-continue")) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                        [self = shared_from_this()](beast::error_code wec, std::size_t) {
                          if (wec) return self->Fail(wec);
                          self->ReadBody();
                        });
      return;
    }
    ReadBody();
  }

  // Holds the body's bytes against the server's budget and the peer's share of it before a
  // byte of it is read; the refusal when either is spent.
  std::optional<RefusalReason> ReserveBody() {
    std::size_t want = 0;
    if (parser_->content_length()) {
      want = static_cast<std::size_t>(*parser_->content_length());
    } else if (parser_->chunked()) {
      want = limits().max_body_bytes;
    }
    if (want == 0) return std::nullopt;
    if (state_.bodies_in_flight + want > limits().max_bodies_in_flight_bytes) {
      return RefusalReason::kBusy;
    }
    const auto held = state_.peer_bodies.find(peer_);
    const std::size_t peer_held = held == state_.peer_bodies.end() ? 0 : held->second;
    if (peer_held + want > state_.PeerBodyBudget()) return RefusalReason::kPeerBusy;
    state_.bodies_in_flight += want;
    state_.peer_bodies[peer_] += want;
    reserved_ = want;
    return std::nullopt;
  }
  void ReleaseBody() {
    if (reserved_ == 0) return;
    state_.bodies_in_flight -= reserved_;
    auto held = state_.peer_bodies.find(peer_);
    if (held != state_.peer_bodies.end() && (held->second -= reserved_) == 0) {
      state_.peer_bodies.erase(held);
    }
    reserved_ = 0;
  }

  // What is left of the request's deadline (headers and body share it).
  std::chrono::milliseconds RequestTimeLeft() const {
    const auto spent =
        std::chrono::duration_cast<std::chrono::milliseconds>(state_.env.Now() - request_started_);
    return std::max(request_deadline_ - spent, std::chrono::milliseconds(0));
  }

  // Whether the request asks for a route marked as a probe.
  bool IsProbe() const {
    const std::string_view target = Std(parser_->get().target());
    const std::string_view path = target.substr(0, target.find('?'));
    const std::string_view method = Std(parser_->get().method_string());
    return std::any_of(state_.options.routes.begin(), state_.options.routes.end(),
                       [&](const ::tr::reconciler::http::Route& route) {
                         return route.probe && route.path == path && route.method == method;
                       });
  }

  std::size_t FieldCount() const {
    const auto& message = parser_->get();
    return static_cast<std::size_t>(std::distance(message.begin(), message.end()));
  }

  // Reads the body as it comes: each read must bring a byte within body_progress_timeout, and
  // the whole still ends by the request's deadline.
  void ReadBody() {
    if (parser_->is_done()) {
      ReleaseBody();
      // Fields after a chunked body (trailers) would join the headers past their caps and
      // after any check of them: none is taken.
      if (FieldCount() != header_fields_) {
        return Refuse(RefusalReason::kMalformed, 400, "trailer fields are not accepted");
      }
      return Dispatch();
    }
    stream_.expires_after(std::min(limits().body_progress_timeout, RequestTimeLeft()));
    bhttp::async_read_some(stream_, buffer_, *parser_,
                           [self = shared_from_this()](beast::error_code ec, std::size_t) {
                             if (!ec) return self->ReadBody();
                             self->ReleaseBody();
                             self->Fail(ec);
                           });
  }

  void Dispatch() {
    bhttp::request<bhttp::string_body> message = parser_->release();
    Request request;
    request.method = std::string(Std(message.method_string()));
    const std::string_view target = Std(message.target());
    request.path = std::string(target.substr(0, target.find('?')));
    for (const auto& field : message) {
      request.headers.emplace_back(Std(field.name_string()), Std(field.value()));
    }
    request.body = std::move(message.body());
    request.peer = peer_;
    ++requests_;
    const bool keep = message.keep_alive() && place_ != Place::kProbe &&
                      requests_ < limits().max_requests_per_connection;
    Write(Route(request), message.version(), keep);
  }

  Response Route(const Request& request) const {
    bool path_known = false;
    for (const auto& route : state_.options.routes) {
      if (route.path != request.path) continue;
      path_known = true;
      if (route.method != request.method) continue;
      try {
        return route.handler(request);
      } catch (const std::exception& e) {
        state_.log->error("step=handle path={} error={}", LogValue(request.path),
                          LogValue(e.what()));
        return {500, "text/plain", "internal error\n"};
      }
    }
    if (path_known) return {405, "text/plain", "method not allowed\n"};
    return {404, "text/plain", "not found\n"};
  }

  // Writes from the response's own buffer: a shared body is held, not copied, until written.
  void Write(Response response, unsigned version, bool keep_alive) {
    body_ = response.shared_body ? std::move(response.shared_body)
                                 : std::make_shared<const std::string>(std::move(response.body));
    response_.emplace(static_cast<bhttp::status>(response.status), version ? version : 11);
    response_->set(bhttp::field::content_type, response.content_type);
    response_->body() = beast::span<const char>(body_->data(), body_->size());
    response_->keep_alive(keep_alive);
    response_->prepare_payload();
    stream_.expires_after(limits().write_timeout);
    bhttp::async_write(stream_, *response_,
                       [self = shared_from_this(), keep_alive](beast::error_code ec, std::size_t) {
                         self->response_.reset();
                         self->body_.reset();
                         if (ec == beast::error::timeout) {
                           // Not read within the write deadline: the stream closed it.
                           return self->state_.Refused(RefusalReason::kTimeout, self->peer_);
                         }
                         if (ec) return self->stream_.close();
                         if (!keep_alive) return self->Linger();
                         self->ReadRequest(self->limits().keep_alive_timeout);
                       });
  }

  void Refuse(RefusalReason reason, int status, std::string_view text) {
    state_.Refused(reason, peer_);
    Write({status, "text/plain", std::string(text) + "\n"}, 11, false);
  }

  void Fail(beast::error_code ec) {
    if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
      return Refuse(RefusalReason::kHeadersTooLarge, 431, "request headers too large");
    }
    if (ec == bhttp::error::body_limit) {
      return Refuse(RefusalReason::kBodyTooLarge, 413, "payload too large");
    }
    if (ec == beast::error::timeout) {
      state_.Refused(RefusalReason::kTimeout, peer_);  // the stream closed the socket already
      return;
    }
    if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message ||
        ec == asio::error::eof ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset) {
      return stream_.close();
    }
    if (ec.category() == beast::error_code(bhttp::error::bad_target).category()) {
      return Refuse(RefusalReason::kMalformed, 400, "bad request");
    }
    stream_.close();
  }

  // Closes after the answer went out: stops sending, then reads what the peer still sends for
  // a moment, so that a close with unread bytes (an unread body) does not reset the connection
  // before the peer has read the answer.
  void Linger() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kLinger);
    Drain();
  }
  void Drain() {
    if (!scratch_) scratch_ = std::make_unique<std::array<char, 4096>>();
    stream_.async_read_some(asio::buffer(*scratch_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->drained_ += n;
                              if (ec || self->drained_ > kMaxDrainBytes) {
                                return self->stream_.close();
                              }
                              self->Drain();
                            });
  }

  State& state_;
  beast::tcp_stream stream_;
  const std::string peer_;
  const Place place_;
  // Its limit only bounds what one read may bring in past the header limit; the parser's own
  // limits are the ones that refuse.
  beast::flat_buffer buffer_{state_.options.limits.max_header_bytes + kReadSlackBytes};
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  // The parser keeps a reference to it: it lives as long as the connection.
  std::function<void(std::uint64_t, beast::string_view, beast::error_code&)> on_chunk_header_;
  std::size_t header_fields_ = 0;
  std::optional<bhttp::response<bhttp::span_body<const char>>> response_;
  std::shared_ptr<const std::string> body_;  // what response_ points into
  std::size_t reserved_ = 0;
  Env::TimePoint request_started_;
  std::chrono::milliseconds request_deadline_{0};
  std::size_t requests_ = 0;
  std::size_t drained_ = 0;
  // What a closing connection drains into; made only then (issue 49, finding 7).
  std::unique_ptr<std::array<char, 4096>> scratch_;
};

void Admit(State& state, tcp::socket socket) {
  beast::error_code ec;
  const tcp::endpoint remote = socket.remote_endpoint(ec);
  if (ec) return;  // gone already
  std::string peer = remote.address().to_string();
  const auto it = state.per_peer.find(peer);
  const std::size_t from_peer = it == state.per_peer.end() ? 0 : it->second;
  const ServerLimits& limits = state.options.limits;
  std::optional<RefusalReason> refusal;
  Place place = Place::kRegular;
  if (from_peer >= limits.max_connections_per_peer) {
    refusal = RefusalReason::kPeerConnections;
  } else if (state.connections >= limits.max_connections) {
    place = Place::kProbe;
    if (state.probe_connections >= limits.probe_connections) refusal = RefusalReason::kConnections;
  }
  if (refusal) place = Place::kNone;
  auto connection = std::make_shared<Connection>(state, std::move(socket), std::move(peer), place);
  if (refusal) return connection->RefuseAtOnce(*refusal);
  connection->Start();
}

void Accept(State& state) {
  state.acceptor.async_accept([&state](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) {
      Admit(state, std::move(socket));
      return Accept(state);
    }
    // Out of descriptors or memory: pause instead of spinning on the same error.
    state.log->warn("step=accept error={}", LogValue(ec.message()));
    state.accept_pause.expires_after(std::chrono::milliseconds(100));
    state.accept_pause.async_wait([&state](beast::error_code wait_ec) {
      if (!wait_ec) Accept(state);
    });
  });
}

absl::Status Bind(State& state, const std::string& host, int port) {
  beast::error_code ec;
  tcp::resolver resolver(state.io);
  const auto flags = host.empty() ? tcp::resolver::passive : tcp::resolver::flags();
  auto endpoints = resolver.resolve(host, std::to_string(port), flags, ec);
  if (ec || endpoints.empty()) {
    return absl::UnavailableError("cannot resolve listen address " + host + ": " + ec.message());
  }
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  state.acceptor.open(endpoint.protocol(), ec);
  if (!ec) state.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) state.acceptor.bind(endpoint, ec);
  if (!ec) state.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError("cannot bind " + state.options.name + " listener " + host +
                                  ":" + std::to_string(port) + ": " + ec.message());
  }
  state.port = state.acceptor.local_endpoint().port();
  return absl::OkStatus();
}

}  // namespace

HttpServer::HttpServer(std::unique_ptr<State> state) : state_(std::move(state)) {}

HttpServer::~HttpServer() {
  state_->io.stop();
  if (state_->thread.joinable()) state_->thread.join();
}

int HttpServer::port() const { return state_->port; }

std::size_t HttpServer::OpenConnections() const {
  std::promise<std::size_t> count;
  asio::post(state_->io, [&] { count.set_value(state_->connections); });
  return count.get_future().get();
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(ServerOptions options, Env& env) {
  absl::StatusOr<std::pair<std::string, int>> address = SplitListenAddress(options.listen);
  if (!address.ok()) return address.status();
  auto state = std::make_unique<State>(std::move(options), env);
  if (absl::Status s = Bind(*state, address->first, address->second); !s.ok()) return s;
  Accept(*state);
  State& loop = *state;
  state->thread = std::thread([&loop] {
    NameThisThread("http-server");
    loop.io.run();
  });
  state->log->info("step=listen address={}:{}", address->first, state->port);
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(state)));
}

}  // namespace tr::reconciler::http
