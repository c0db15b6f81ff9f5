// The exposed HTTP server against hostile clients on loopback: idle and slowloris connections,
// endless headers, too many fields, oversized and chunked bodies, connection caps. Attackers
// connect from 127.0.0.2 and the honest client from 127.0.0.1, so per-peer caps tell them apart.
//
// Nothing here measures speed: "answered while the attackers are still connected" is checked
// by the attackers' sockets being open when the answer comes, with their deadline far away.
// scripts/bench (listener_load_bench) gives the latencies.
#include "reconciler/clients/http/http_server.h"
#include "reconciler/clients/http/rendered_text.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <sstream>
#include <thread>

#include "base/env.h"
#include "base/mutex.h"
#include "reconciler/runtime/logging.h"
#include "spdlog/sinks/ostream_sink.h"
#include "tests/support/process_memory.h"
#include "tests/support/wait.h"

namespace tr::reconciler::http {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A connected TCP socket from `source` (a loopback address) to 127.0.0.1:port; closed on
// destruction.
class Socket {
 public:
  // `receive_buffer`: the kernel's receive buffer in bytes (0: its default), small for a reader
  // who does not read.
  Socket(int port, const char* source = "127.0.0.1", int receive_buffer = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (receive_buffer > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source, &from.sin_addr);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
      Close();
      return;
    }
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) Close();
  }
  ~Socket() { Close(); }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Everything until the server closes (or `timeout_ms` without a byte: the test fails then).
  std::string ReadAll(int timeout_ms = 30'000) {
    std::string out;
    char buf[4096];
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) return out + "<timed out>";
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return out;
      out.append(buf, static_cast<size_t>(n));
    }
  }

  // One answer of a kept-alive connection: up to and including a body of Content-Length.
  std::string ReadAnswer() {
    std::string out;
    char buf[4096];
    for (;;) {
      const size_t end = out.find("\r\n\r\n");
      if (end != std::string::npos) {
        const size_t at = out.find("Content-Length: ");
        const size_t length = at == std::string::npos ? 0 : std::stoul(out.substr(at + 16));
        if (out.size() >= end + 4 + length) return out;
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 30'000) <= 0) return out + "<timed out>";
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return out;
      out.append(buf, static_cast<size_t>(n));
    }
  }

  // True when the server has neither answered nor closed (nothing to read yet).
  bool StillOpenAndSilent() const {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) == 0;
  }

 private:
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
};

std::string Get(const std::string& path) {
  return "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
}

std::string Post(const std::string& path, const std::string& body) {
  return "POST " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}


class HttpServerTest : public testing::Test {
 protected:
  void Serve(ServerLimits limits, std::vector<Route> more_routes = {}) {
    ServerOptions options;
    options.name = "test";
    options.listen = "127.0.0.1:0";
    options.limits = limits;
    options.routes = {
        {"GET", "/healthz", [](const Request&) { return Response{200, "text/plain", "ok\n"}; },
         /*probe=*/true},
        {"POST", "/hooks/echo",
         [this](const Request& req) {
           handled_++;
           return Response{202, "text/plain",
                           "peer=" + req.peer + " sig=" + req.Header("x-signature") +
                               " body=" + req.body};
         }},
    };
    for (Route& route : more_routes) options.routes.push_back(std::move(route));
    options.on_refused = [this](RefusalReason reason) {
      refused_.Change([reason](std::map<std::string, int>& refused) {
        ++refused[std::string(RefusalReasonName(reason))];
      });
    };
    auto server = HttpServer::Start(std::move(options), Env::Default());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  int Refused(const std::string& reason) {
    const std::map<std::string, int> refused = refused_.Get();
    const auto found = refused.find(reason);
    return found == refused.end() ? 0 : found->second;
  }
  // True once `n` refusals for `reason` were counted (the server's loop counts a timeout as it
  // handles it, which may come just after the close a client sees).
  bool WaitRefused(const std::string& reason, int n) {
    return refused_.WaitFor([&](const std::map<std::string, int>& refused) {
      const auto found = refused.find(reason);
      return found != refused.end() && found->second >= n;
    });
  }

  // Deadlines far beyond the test, caps far beyond its connections: what holds is the loop.
  static ServerLimits Roomy() {
    ServerLimits limits;
    limits.max_connections = 1000;
    limits.max_connections_per_peer = 1000;
    limits.request_deadline = std::chrono::minutes(5);
    return limits;
  }

  int port() const { return server_->port(); }

  std::atomic<int> handled_{0};
  test_support::Watched<std::map<std::string, int>> refused_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, RoutesAnswerAndUnknownPathsAndMethodsAreRefused) {
  Serve(ServerLimits{});
  Socket health(port());
  ASSERT_TRUE(health.Send(Get("/healthz")));
  std::string answer = health.ReadAll();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(answer, HasSubstr("\r\n\r\nok\n"));

  Socket post(port());
  ASSERT_TRUE(post.Send("POST /hooks/echo?x=1 HTTP/1.1\r\nHost: x\r\nX-Signature: abc\r\n"
                        "Content-Length: 5\r\nConnection: close\r\n\r\nhello"));
  EXPECT_THAT(post.ReadAll(), HasSubstr("peer=127.0.0.1 sig=abc body=hello"));

  Socket missing(port());
  ASSERT_TRUE(missing.Send(Get("/nowhere")));
  EXPECT_THAT(missing.ReadAll(), StartsWith("HTTP/1.1 404"));
  Socket method(port());
  ASSERT_TRUE(method.Send(Get("/hooks/echo")));
  EXPECT_THAT(method.ReadAll(), StartsWith("HTTP/1.1 405"));
  Socket garbage(port());
  ASSERT_TRUE(garbage.Send("NOT HTTP AT ALL\r\n\r\n"));
  EXPECT_THAT(garbage.ReadAll(), StartsWith("HTTP/1.1 400"));
  EXPECT_EQ(Refused("malformed"), 1);
}

TEST_F(HttpServerTest, KeepAliveServesSeveralRequestsAndExpectContinueGetsA100) {
  Serve(ServerLimits{});
  Socket s(port());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(s.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_THAT(s.ReadAnswer(), StartsWith("HTTP/1.1 200")) << i;
  }
  ASSERT_TRUE(s.Send("POST /hooks/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                     "Expect: 100-continue\r\n\r\n"));
  EXPECT_THAT(s.ReadAnswer(), StartsWith("HTTP/1.1 100 Continue"));
  ASSERT_TRUE(s.Send("hi"));
  EXPECT_THAT(s.ReadAnswer(), HasSubstr("body=hi"));
}

TEST_F(HttpServerTest, IdleAndSlowlorisConnectionsDoNotDelayOthers) {
  Serve(Roomy());
  std::vector<std::unique_ptr<Socket>> idle, slow;
  for (int i = 0; i < 200; ++i) {
    idle.push_back(std::make_unique<Socket>(port(), "127.0.0.2"));
    ASSERT_TRUE(idle.back()->ok()) << i;
  }
  for (int i = 0; i < 50; ++i) {
    slow.push_back(std::make_unique<Socket>(port(), "127.0.0.2"));
    ASSERT_TRUE(slow.back()->Send("POST /hooks/echo HTTP/1.1\r\nHo")) << i;
  }
  for (int round = 0; round < 3; ++round) {
    for (auto& s : slow) ASSERT_TRUE(s->Send("s"));  // a header byte now and then
    Socket hook(port());
    ASSERT_TRUE(hook.Send(Post("/hooks/echo", "signed")));
    EXPECT_THAT(hook.ReadAll(), HasSubstr("body=signed"));
    Socket health(port());
    ASSERT_TRUE(health.Send(Get("/healthz")));
    EXPECT_THAT(health.ReadAll(), StartsWith("HTTP/1.1 200"));
  }
  // Answered while every attacker still held its connection: nobody waited for them.
  for (auto& s : idle) EXPECT_TRUE(s->StillOpenAndSilent());
  for (auto& s : slow) EXPECT_TRUE(s->StillOpenAndSilent());
  EXPECT_EQ(handled_, 3);
}

TEST_F(HttpServerTest, ARequestNotCompleteWithinTheDeadlineIsCut) {
  ServerLimits limits;
  limits.request_deadline = std::chrono::milliseconds(300);
  Serve(limits);
  Socket slow(port(), "127.0.0.2");
  ASSERT_TRUE(slow.Send("POST /hooks/echo HTTP/1.1\r\nHost: x\r\n"));
  // The server closes it without an answer: a byte a second does not extend the deadline.
  std::string seen;
  for (int i = 0; i < 100 && slow.Send("X"); ++i) {
    pollfd p{slow.fd(), POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) break;
  }
  seen = slow.ReadAll();
  EXPECT_EQ(seen, "");
  EXPECT_TRUE(WaitRefused("timeout", 1));
  EXPECT_EQ(Refused("timeout"), 1);
}

TEST_F(HttpServerTest, EndlessHeadersAreCutAtTheLimitWithA431AndMemoryStaysFlat) {
  Serve(ServerLimits{});  // 16 KiB of header
  const long before = test_support::ResidentKib();
  std::vector<std::jthread> attackers;
  std::atomic<size_t> most_sent{0};
  std::vector<std::string> answers(8);
  for (int i = 0; i < 8; ++i) {
    attackers.emplace_back([&, i] {
      Socket s(port(), "127.0.0.2");
      size_t sent = 0;
      const std::string line = "X-Filler: " + std::string(8 << 10, 'a') + "\r\n";
      if (!s.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n")) return;
      // Up to 128 MiB, as an attacker would; the server's answer ends it long before.
      while (sent < (size_t{128} << 20) && s.Send(line)) {
        sent += line.size();
        pollfd p{s.fd(), POLLIN, 0};
        if (::poll(&p, 1, 0) > 0) break;
      }
      answers[static_cast<size_t>(i)] = s.ReadAll();
      size_t seen = most_sent.load();
      while (sent > seen && !most_sent.compare_exchange_weak(seen, sent)) {
      }
    });
  }
  attackers.clear();  // joins
  for (const std::string& answer : answers) EXPECT_THAT(answer, StartsWith("HTTP/1.1 431"));
  EXPECT_EQ(Refused("headers_too_large"), 8);
  // What the kernel buffers on both sides plus what the server drains before it closes; far
  // from the 128 MiB each would have sent.
  EXPECT_LT(most_sent.load(), size_t{16} << 20);
  EXPECT_LT(test_support::ResidentKib() - before, 64 * 1024);
}

TEST_F(HttpServerTest, TooManyHeaderFieldsGet431) {
  ServerLimits limits;
  limits.max_header_fields = 10;
  Serve(limits);
  std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 11; ++i) request += "X-" + std::to_string(i) + ": y\r\n";
  Socket s(port());
  ASSERT_TRUE(s.Send(request + "\r\n"));
  EXPECT_THAT(s.ReadAll(), StartsWith("HTTP/1.1 431"));
}

TEST_F(HttpServerTest, OversizedBodiesGet413DeclaredOrChunked) {
  ServerLimits limits;
  limits.max_body_bytes = 1000;
  Serve(limits);
  Socket declared(port());
  ASSERT_TRUE(declared.Send("POST /hooks/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n"));
  EXPECT_THAT(declared.ReadAll(), StartsWith("HTTP/1.1 413"));
  Socket chunked(port());
  ASSERT_TRUE(chunked.Send("POST /hooks/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"));
  for (int i = 0; i < 4; ++i) chunked.Send("200\r\n" + std::string(0x200, 'b') + "\r\n");
  EXPECT_THAT(chunked.ReadAll(), StartsWith("HTTP/1.1 413"));
  EXPECT_EQ(Refused("too_large"), 2);
  EXPECT_EQ(handled_, 0);
}

TEST_F(HttpServerTest, ConnectionCapsAnswer503AtOnceAndFreeTheirPlace) {
  ServerLimits limits = Roomy();
  limits.max_connections = 20;
  limits.max_connections_per_peer = 5;
  Serve(limits);
  std::vector<std::unique_ptr<Socket>> held;
  for (int i = 0; i < 5; ++i) held.push_back(std::make_unique<Socket>(port(), "127.0.0.2"));
  Socket sixth(port(), "127.0.0.2");
  EXPECT_THAT(sixth.ReadAll(), StartsWith("HTTP/1.1 503"));  // nothing sent, answered anyway
  for (int i = 0; i < 15; ++i) {
    held.push_back(std::make_unique<Socket>(port(), ("127.0.1." + std::to_string(i + 1)).c_str()));
  }
  Socket over(port(), "127.0.0.3");
  EXPECT_THAT(over.ReadAll(), StartsWith("HTTP/1.1 503"));
  EXPECT_EQ(Refused("peer_connections"), 1);
  EXPECT_EQ(Refused("connections"), 1);
  held.clear();
  // The places are given back once the server sees the closes.
  std::string answer;
  for (int attempt = 0; attempt < 200; ++attempt) {
    Socket again(port(), attempt % 2 ? "127.0.0.2" : "127.0.0.1");
    if (!again.Send(Get("/healthz"))) continue;
    answer = again.ReadAll();
    if (answer.starts_with("HTTP/1.1 200")) break;
  }
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200"));
}

TEST_F(HttpServerTest, BodiesInFlightPastTheBudgetGet503) {
  ServerLimits limits = Roomy();
  limits.max_body_bytes = 1000;
  limits.max_bodies_in_flight_bytes = 1500;
  limits.body_budget_shares = 1;  // one peer may hold it all: the total is what is tested
  Serve(limits);
  Socket first(port());
  ASSERT_TRUE(first.Send("POST /hooks/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n"
                         "Expect: 100-continue\r\n\r\n"));
  // The 100 comes once its 1000 bytes are held, of the 1500 all bodies may hold at once.
  ASSERT_THAT(first.ReadAnswer(), StartsWith("HTTP/1.1 100"));
  Socket second(port());
  ASSERT_TRUE(second.Send("POST /hooks/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 600\r\n\r\n"));
  EXPECT_THAT(second.ReadAll(), StartsWith("HTTP/1.1 503"));
  EXPECT_EQ(Refused("busy"), 1);
  ASSERT_TRUE(first.Send(std::string(1000, 'c')));
  EXPECT_THAT(first.ReadAnswer(), HasSubstr("202"));
  // Given back: the same body fits now.
  Socket third(port());
  ASSERT_TRUE(third.Send(Post("/hooks/echo", std::string(600, 'd'))));
  EXPECT_THAT(third.ReadAll(), StartsWith("HTTP/1.1 202"));
}

// Issue 49, finding 3: one peer holds at most its share of the bodies in flight, so another
// peer's bodies still fit; and a body that sends nothing is cut long before the request's
// deadline, giving its place back.
TEST_F(HttpServerTest, APeerHoldsItsShareOfTheBodyBudgetAndSilentBodiesAreCut) {
  ServerLimits limits = Roomy();  // request deadline 5 min
  limits.max_body_bytes = 1000;
  limits.max_bodies_in_flight_bytes = 4000;  // a peer's share: 1000
  limits.body_progress_timeout = std::chrono::milliseconds(300);
  Serve(limits);
  const std::string head =
      "POST /hooks/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n";
  Socket silent(port(), "127.0.0.2");
  ASSERT_TRUE(silent.Send(head));
  ASSERT_THAT(silent.ReadAnswer(), StartsWith("HTTP/1.1 100"));
  Socket second(port(), "127.0.0.2");
  ASSERT_TRUE(second.Send(head));
  EXPECT_THAT(second.ReadAll(), StartsWith("HTTP/1.1 503"));
  EXPECT_EQ(Refused("peer_busy"), 1);
  Socket other(port(), "127.0.0.1");
  ASSERT_TRUE(other.Send(Post("/hooks/echo", std::string(1000, 'o'))));
  EXPECT_THAT(other.ReadAll(), StartsWith("HTTP/1.1 202"));
  // Closed without an answer once 300 ms pass without a byte of its body, not after 5 min.
  EXPECT_EQ(silent.ReadAll(), "");
  EXPECT_TRUE(WaitRefused("timeout", 1));
  EXPECT_EQ(Refused("timeout"), 1);
  Socket again(port(), "127.0.0.2");
  ASSERT_TRUE(again.Send(Post("/hooks/echo", std::string(1000, 'a'))));
  EXPECT_THAT(again.ReadAll(), StartsWith("HTTP/1.1 202"));
}

// A body that keeps coming is not cut by the progress deadline, only by the request's.
TEST_F(HttpServerTest, ABodyArrivingInPiecesIsReadPastTheProgressTimeout) {
  ServerLimits limits = Roomy();
  limits.body_progress_timeout = std::chrono::milliseconds(300);
  Serve(limits);
  Socket s(port());
  ASSERT_TRUE(s.Send("POST /hooks/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n"
                     "Connection: close\r\n\r\n"));
  for (const char* piece : {"ab", "cd", "ef"}) {
    pollfd p{s.fd(), POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 200), 0);  // 200 ms each, 600 in all: past 300 ms, never silent for it
    ASSERT_TRUE(s.Send(piece));
  }
  EXPECT_THAT(s.ReadAll(), HasSubstr("body=abcdef"));
}

// Issue 49, finding 10: chunk extensions carry nothing we read: one of 2 KiB is refused, and
// one of 79 KiB (which the parser took before) does not even fit the read buffer.
TEST_F(HttpServerTest, ALongChunkExtensionIsRefused) {
  Serve(ServerLimits{});
  auto chunked = [](size_t extension) {
    return "POST /hooks/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
           "Connection: close\r\n\r\n5;e=" +
           std::string(extension, 'x') + "\r\nhello\r\n0\r\n\r\n";
  };
  Socket s(port());
  ASSERT_TRUE(s.Send(chunked(2 << 10)));
  EXPECT_THAT(s.ReadAll(), StartsWith("HTTP/1.1 400"));
  Socket huge(port());
  huge.Send(chunked(79 << 10));  // the server may close before it has all of it
  EXPECT_THAT(huge.ReadAll(), StartsWith("HTTP/1.1 4"));
  EXPECT_EQ(handled_, 0);
  Socket small(port());  // a short one is fine
  ASSERT_TRUE(small.Send("POST /hooks/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                         "Connection: close\r\n\r\n5;e=1\r\nhello\r\n0\r\n\r\n"));
  EXPECT_THAT(small.ReadAll(), HasSubstr("body=hello"));
}

// Issue 49, finding 10: fields after a chunked body would bypass the header caps and could
// carry a signature the handler reads as a header; the request is refused.
TEST_F(HttpServerTest, TrailerFieldsAreRefused) {
  Serve(ServerLimits{});
  Socket s(port());
  ASSERT_TRUE(s.Send("POST /hooks/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                     "Connection: close\r\n\r\n5\r\nhello\r\n0\r\nX-Signature: abc\r\n\r\n"));
  EXPECT_THAT(s.ReadAll(), StartsWith("HTTP/1.1 400"));
  EXPECT_EQ(handled_, 0);
  EXPECT_EQ(Refused("malformed"), 1);
}

// Issue 49, finding 10: refusals are logged with the peer's address, at most a line per reason
// a second, however many come.
TEST_F(HttpServerTest, RefusalsAreLoggedWithThePeerAtABoundedRate) {
  Serve(Roomy());
  std::ostringstream log_text;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text);
  ModuleLogger("test")->sinks().push_back(sink);
  const auto started = Env::Default().Now();
  for (int i = 0; i < 500; ++i) {
    Socket garbage(port(), "127.0.0.2");
    ASSERT_TRUE(garbage.Send("NOT HTTP AT ALL\r\n\r\n"));
    ASSERT_THAT(garbage.ReadAll(), StartsWith("HTTP/1.1 400")) << i;
  }
  const auto seconds = std::chrono::ceil<std::chrono::seconds>(Env::Default().Now() - started);
  ModuleLogger("test")->flush();
  ModuleLogger("test")->sinks().pop_back();
  EXPECT_EQ(Refused("malformed"), 500);
  std::istringstream lines(log_text.str());
  int logged = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("step=refuse") == std::string::npos) continue;
    ++logged;
    EXPECT_THAT(line, HasSubstr("peer=127.0.0.2"));
    EXPECT_THAT(line, HasSubstr("reason=malformed"));
  }
  EXPECT_GE(logged, 1);
  EXPECT_LE(logged, seconds.count() + 1) << "in " << seconds.count() << " s";
}

// Issue 49, finding 6: with every connection of the health listener's cap held by kept-alive
// connections (four addresses at their own cap of 16), /healthz is still answered, on the
// places held for probes, and those places serve nothing else.
TEST_F(HttpServerTest, ProbesAreAnsweredWhenKeptAliveConnectionsFillTheCap) {
  ServerLimits limits = ProbeEndpointLimits();
  limits.max_connections = 64;
  limits.keep_alive_timeout = std::chrono::minutes(5);
  Serve(limits);
  std::vector<std::unique_ptr<Socket>> held;
  for (int i = 0; i < 64; ++i) {
    const std::string source = "127.0.0." + std::to_string(2 + i / 16);
    held.push_back(std::make_unique<Socket>(port(), source.c_str()));
    ASSERT_TRUE(held.back()->Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")) << i;
    ASSERT_THAT(held.back()->ReadAnswer(), StartsWith("HTTP/1.1 200")) << i;
  }
  for (int i = 0; i < 20; ++i) {
    Socket probe(port());
    ASSERT_TRUE(probe.Send(Get("/healthz")));
    EXPECT_THAT(probe.ReadAll(), StartsWith("HTTP/1.1 200")) << i;
  }
  Socket other(port());
  ASSERT_TRUE(other.Send(Post("/hooks/echo", "x")));
  EXPECT_THAT(other.ReadAll(), StartsWith("HTTP/1.1 503"));
  EXPECT_EQ(handled_, 0);
  for (auto& s : held) EXPECT_TRUE(s->StillOpenAndSilent());
}

// Issue 49, finding 6: a large text (/metrics) read slowly on many connections is held once,
// shared by every connection writing it, and the write deadline lets it go.
TEST_F(HttpServerTest, SlowReadersOfALargeTextShareOneCopyUntilTheWriteDeadlineCutsThem) {
  RenderedText text([] { return std::string(size_t{8} << 20, 'm'); }, std::chrono::minutes(1),
                    Env::Default());
  ServerLimits limits = Roomy();
  limits.write_timeout = std::chrono::seconds(3);
  test_support::Watched<int> asked;  // handed the text: a reader until its write ends
  Serve(limits, {{"GET", "/metrics", [&text, &asked](const Request&) {
                    Response response{200, "text/plain", "", text.Get()};
                    asked.Change([](int& n) { ++n; });
                    return response;
                  }}});
  const long before = test_support::ResidentKib();
  std::vector<std::unique_ptr<Socket>> readers;
  for (int i = 0; i < 16; ++i) {
    // A 4 KiB receive buffer and no reads: the 8 MiB answer cannot be written out.
    readers.push_back(std::make_unique<Socket>(port(), "127.0.0.2", 4096));
    ASSERT_TRUE(readers.back()->Send("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  }
  // Every connection is writing the same rendering.
  ASSERT_TRUE(asked.WaitFor([](int n) { return n == 16; }));
  EXPECT_EQ(text.readers(), 16);
  EXPECT_EQ(text.renders(), 1u);
  EXPECT_LT(test_support::ResidentKib() - before, 48 * 1024);  // one 8 MiB copy, not 16
  Socket health(port());
  ASSERT_TRUE(health.Send(Get("/healthz")));
  EXPECT_THAT(health.ReadAll(), StartsWith("HTTP/1.1 200"));
  // Nobody reads: the write deadline cuts each, counted once the connection let the text go.
  EXPECT_TRUE(WaitRefused("timeout", 16));
  EXPECT_EQ(Refused("timeout"), 16);
  EXPECT_EQ(text.readers(), 0);
}

TEST(HttpServerStartTest, RefusesABadAddressAndAPortInUse) {
  ServerOptions options;
  options.listen = "127.0.0.1";
  EXPECT_EQ(HttpServer::Start(options, Env::Default()).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.listen = "127.0.0.1:0";
  auto first = HttpServer::Start(options, Env::Default());
  ASSERT_TRUE(first.ok());
  options.listen = "127.0.0.1:" + std::to_string((*first)->port());
  EXPECT_EQ(HttpServer::Start(options, Env::Default()).status().code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace tr::reconciler::http
