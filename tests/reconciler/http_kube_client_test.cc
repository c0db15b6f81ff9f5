// HttpKubeClient against a real HTTPS server on loopback: the kubeconfig's CA is the only trust
// anchor, the certificate must name the host, one keep-alive connection serves the calls, and
// the process's shutdown ends a call that waits for an answer or a handshake.
#include "reconciler/clients/kube/http_kube_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/pem.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "httplib.h"
#include "tests/sim/common/pki.h"
#include "tests/support/blackhole.h"
#include "tests/support/http_listen.h"
#include "tests/support/simulated_env.h"

namespace tr::reconciler::kube {
namespace {

constexpr char kToken[] = "cluster-token";

using namespace std::chrono_literals;

// An API server that answers GET /api/v1/nodes (a watch of them: one event, then the end) and
// notes the client ports it was asked from. Held, it keeps every request waiting until
// released (at most a minute, so that a broken test ends).
class NodesServer {
 public:
  // `port` 0: any free port. `tickets` false: it sends no session tickets, so no connection
  // resumes a session.
  explicit NodesServer(const sim::CertifiedKey& tls, int port = 0, bool tickets = true) {
    std::unique_ptr<BIO, decltype(&BIO_free)> cb(
        BIO_new_mem_buf(tls.cert_pem.data(), static_cast<int>(tls.cert_pem.size())), BIO_free);
    std::unique_ptr<BIO, decltype(&BIO_free)> kb(
        BIO_new_mem_buf(tls.key_pem.data(), static_cast<int>(tls.key_pem.size())), BIO_free);
    X509* cert = PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr);
    EVP_PKEY* key = PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr);
    server_ = std::make_unique<httplib::SSLServer>(cert, key);
    X509_free(cert);
    EVP_PKEY_free(key);
    if (!tickets) SSL_CTX_set_num_tickets(server_->ssl_context(), 0);
    server_->Get("/api/v1/nodes", [this](const httplib::Request& req, httplib::Response& res) {
      std::unique_lock lock(mu_);
      ports_.insert(req.remote_port);
      ++requests_;
      arrived_.notify_all();
      released_.wait_for(lock, 60s, [this] { return !held_; });
      authorized_ = req.get_header_value("Authorization") == std::string("Bearer ") + kToken;
      if (req.has_param("watch")) {
        res.set_content(
            R"({"type":"ADDED","object":{"metadata":{"name":"cp-0","resourceVersion":"7"}}})"
            "\n",
            "application/json");
        return;
      }
      res.set_content(R"({"items":[{"metadata":{"name":"cp-0"}}]})", "application/json");
    });
    // An idle kept-alive connection is closed after a second (a real server's is after a while).
    server_->set_keep_alive_timeout(1);
    port_ = port == 0 ? server_->bind_to_any_port("127.0.0.1")
                      : (server_->bind_to_port("127.0.0.1", port) ? port : -1);
    thread_ = test_support::ListenAfterBind(*server_);
  }
  ~NodesServer() {
    Release();
    server_->stop();
    thread_.join();
  }
  void Hold() {
    std::lock_guard lock(mu_);
    held_ = true;
  }
  void Release() {
    std::lock_guard lock(mu_);
    held_ = false;
    released_.notify_all();
  }
  int requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  // True once `n` requests have come (at most a minute).
  bool WaitForRequests(int n) {
    std::unique_lock lock(mu_);
    return arrived_.wait_for(lock, 60s, [&] { return requests_ >= n; });
  }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  std::set<int> ports() {
    std::lock_guard lock(mu_);
    return ports_;
  }
  bool authorized() {
    std::lock_guard lock(mu_);
    return authorized_;
  }

 private:
  std::unique_ptr<httplib::SSLServer> server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::set<int> ports_;
  bool authorized_ = false;
  bool held_ = false;
  int requests_ = 0;
  std::condition_variable released_;
  std::condition_variable arrived_;  // a request came
};

class HttpKubeClientTest : public ::testing::Test {
 public:
  // As talos-reconciler's RunCli does: a cut handshake gives EPIPE, not a SIGPIPE death.
  static void SetUpTestSuite() { std::signal(SIGPIPE, SIG_IGN); }

 protected:
  void SetUp() override {
    auto cluster = sim::CertificateAuthority::Create("cluster", sim::KeyType::kEcdsaP256);
    auto other = sim::CertificateAuthority::Create("other", sim::KeyType::kEcdsaP256);
    ASSERT_TRUE(cluster.ok() && other.ok());
    cluster_ca_.emplace(std::move(*cluster));
    other_ca_.emplace(std::move(*other));
  }

  static sim::CertifiedKey ServerCert(const sim::CertificateAuthority& ca, const char* ip) {
    sim::LeafRequest request;
    request.common_name = "kube-apiserver";
    request.ip_sans = {ip};
    request.server = true;
    request.key_type = sim::KeyType::kEcdsaP256;
    absl::StatusOr<sim::CertifiedKey> cert = ca.Issue(request);
    EXPECT_TRUE(cert.ok()) << cert.status();
    return cert.ok() ? *cert : sim::CertifiedKey{};
  }

  std::unique_ptr<KubeClient> ClientFor(const NodesServer& server) {
    HttpKubeClientOptions options;
    options.connect_timeout = 5s;
    options.request_timeout = 5s;
    return ClientAt(server.url(), options);
  }

  // On `env`, whose clock the idle closer's sweeps follow.
  std::unique_ptr<KubeClient> ClientAt(const std::string& url, HttpKubeClientOptions options,
                                       Env& env = Env::Default()) {
    KubeCredentials credentials;
    credentials.server = url;
    credentials.ca_pem = cluster_ca_->cert_pem();
    credentials.token = kToken;
    absl::StatusOr<std::unique_ptr<KubeClient>> client =
        NewHttpKubeClient(credentials, env, options);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? std::move(*client) : nullptr;
  }

  // Timeouts far beyond the test's own deadlines: a call that ends was cancelled.
  static HttpKubeClientOptions Patient(std::stop_token shutdown) {
    HttpKubeClientOptions options;
    options.connect_timeout = 10min;
    options.request_timeout = 10min;
    options.shutdown = std::move(shutdown);
    return options;
  }

  // Closes its connection after `idle_timeout` with nothing in flight.
  static HttpKubeClientOptions Idle(std::chrono::milliseconds idle_timeout) {
    HttpKubeClientOptions options;
    options.connect_timeout = 5s;
    options.request_timeout = 60s;
    options.idle_timeout = idle_timeout;
    return options;
  }

  std::optional<sim::CertificateAuthority> cluster_ca_;
  std::optional<sim::CertificateAuthority> other_ca_;
};

TEST_F(HttpKubeClientTest, TrustsTheClusterCaAndReusesOneConnection) {
  NodesServer server(ServerCert(*cluster_ca_, "127.0.0.1"));
  std::unique_ptr<KubeClient> client = ClientFor(server);
  ASSERT_NE(client, nullptr);
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<std::vector<KubeNode>> nodes = client->ListNodes();
    ASSERT_TRUE(nodes.ok()) << nodes.status();
    ASSERT_EQ(nodes->size(), 1u);
    EXPECT_EQ((*nodes)[0].name, "cp-0");
  }
  EXPECT_EQ(server.ports().size(), 1u) << "three calls, one connection";
  EXPECT_TRUE(server.authorized());
}

// The server closed the kept-alive connection (here: it stopped, and another took its port): the
// next call is sent again on a new connection instead of failing (it failed every 5 s against
// talos-sim, whose idle connections close after 5 s, and the cluster flapped to Blocked).
TEST_F(HttpKubeClientTest, ACallOnAConnectionTheServerClosedIsSentAgain) {
  const sim::CertifiedKey cert = ServerCert(*cluster_ca_, "127.0.0.1");
  auto first = std::make_unique<NodesServer>(cert);
  ASSERT_GT(first->port(), 0);
  const int port = first->port();
  std::unique_ptr<KubeClient> client = ClientFor(*first);
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->ListNodes().ok());
  first.reset();  // closes the connection the client keeps
  NodesServer second(cert, port);
  ASSERT_EQ(second.port(), port);
  absl::StatusOr<std::vector<KubeNode>> nodes = client->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(nodes->size(), 1u);
  EXPECT_EQ(second.requests(), 1);
  // The first server's ticket was offered to the second, which cannot read it.
  EXPECT_EQ(TlsHandshakes(*client).full, 2u);
  EXPECT_EQ(TlsHandshakes(*client).resumed, 0u);
}

// A connection no request has used for the idle timeout is closed by the client, with nothing
// called meanwhile, and the next call opens another.
TEST_F(HttpKubeClientTest, ClosesAnIdleConnectionAndOpensAnotherForTheNextCall) {
  NodesServer server(ServerCert(*cluster_ca_, "127.0.0.1"));
  test_support::SimulatedEnv env;
  std::unique_ptr<KubeClient> client = ClientAt(server.url(), Idle(200ms), env);
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->ListNodes().ok());
  EXPECT_EQ(OpenConnections(*client), 1u);
  // The closer's one thread sweeps as simulated time passes.
  ASSERT_TRUE(env.RunTimersUntil(1, [&] { return OpenConnections(*client) == 0; }))
      << "the idle connection is still open";
  absl::StatusOr<std::vector<KubeNode>> nodes = client->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(server.ports().size(), 2u) << "the second call came on a new connection";
}

// Each connection after the first resumes a TLS session the server gave an earlier one.
TEST_F(HttpKubeClientTest, AConnectionAfterTheFirstResumesATlsSession) {
  NodesServer server(ServerCert(*cluster_ca_, "127.0.0.1"));
  test_support::SimulatedEnv env;
  std::unique_ptr<KubeClient> client = ClientAt(server.url(), Idle(200ms), env);
  ASSERT_NE(client, nullptr);
  for (int connection = 1; connection <= 3; ++connection) {
    absl::StatusOr<std::vector<KubeNode>> nodes = client->ListNodes();
    ASSERT_TRUE(nodes.ok()) << nodes.status();
    EXPECT_EQ(nodes->size(), 1u);
    ASSERT_TRUE(env.RunTimersUntil(1, [&] { return OpenConnections(*client) == 0; }))
        << "the idle connection is still open";
  }
  EXPECT_EQ(server.ports().size(), 3u) << "three connections";
  EXPECT_EQ(TlsHandshakes(*client).full, 1u);
  EXPECT_EQ(TlsHandshakes(*client).resumed, 2u);
  EXPECT_TRUE(server.authorized());
}

// A watch holds a connection of its own: it resumes the session of the kept-alive one, and
// the next watch too.
TEST_F(HttpKubeClientTest, AWatchResumesTheSessionOfTheKeptConnection) {
  NodesServer server(ServerCert(*cluster_ca_, "127.0.0.1"));
  std::unique_ptr<KubeClient> client = ClientFor(server);
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->ListNodes().ok());
  for (int watch = 1; watch <= 2; ++watch) {
    std::vector<std::string> seen;
    const absl::Status ended = client->WatchNodes("1", 30s, {}, [&](const NodeWatchEvent& e) {
      seen.push_back(e.node.name + "@" + e.resource_version);
      return true;
    });
    EXPECT_TRUE(ended.ok()) << ended;
    EXPECT_THAT(seen, ::testing::ElementsAre("cp-0@7"));
  }
  EXPECT_EQ(server.ports().size(), 3u) << "the kept connection and one a watch";
  EXPECT_EQ(TlsHandshakes(*client).full, 1u);
  EXPECT_EQ(TlsHandshakes(*client).resumed, 2u);
}

// A server that sends no tickets gets a full handshake at every connection, and the calls work.
TEST_F(HttpKubeClientTest, AServerWithoutTicketsGetsAFullHandshakeEachTime) {
  NodesServer server(ServerCert(*cluster_ca_, "127.0.0.1"), 0, /*tickets=*/false);
  test_support::SimulatedEnv env;
  std::unique_ptr<KubeClient> client = ClientAt(server.url(), Idle(200ms), env);
  ASSERT_NE(client, nullptr);
  for (int connection = 1; connection <= 2; ++connection) {
    ASSERT_TRUE(client->ListNodes().ok());
    ASSERT_TRUE(env.RunTimersUntil(1, [&] { return OpenConnections(*client) == 0; }))
        << "the idle connection is still open";
  }
  EXPECT_EQ(TlsHandshakes(*client).full, 2u);
  EXPECT_EQ(TlsHandshakes(*client).resumed, 0u);
}

// A call waits for its answer longer than the idle timeout: the closer leaves its connection
// alone. The second client, idle since after the slow call began, shows the closer has swept
// since the slow client's own last request was older than the timeout.
TEST_F(HttpKubeClientTest, TheIdleCloseNeverCutsACallInFlight) {
  const sim::CertifiedKey cert = ServerCert(*cluster_ca_, "127.0.0.1");
  NodesServer slow_server(cert);
  NodesServer other_server(cert);
  test_support::SimulatedEnv env;
  std::unique_ptr<KubeClient> slow = ClientAt(slow_server.url(), Idle(200ms), env);
  std::unique_ptr<KubeClient> other = ClientAt(other_server.url(), Idle(200ms), env);
  ASSERT_NE(slow, nullptr);
  ASSERT_NE(other, nullptr);
  slow_server.Hold();
  auto call = std::async(std::launch::async, [&] { return slow->ListNodes(); });
  ASSERT_TRUE(slow_server.WaitForRequests(1)) << "the request never came";
  ASSERT_TRUE(other->ListNodes().ok());
  ASSERT_TRUE(env.RunTimersUntil(1, [&] { return OpenConnections(*other) == 0; }))
      << "the closer never swept";
  EXPECT_EQ(OpenConnections(*slow), 1u);
  slow_server.Release();
  absl::StatusOr<std::vector<KubeNode>> nodes = call.get();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_EQ(slow_server.requests(), 1) << "the call was cut and sent again";
}

// The other CA stands for every CA but the cluster's, a public one included: it is made the
// process's default trust store (SSL_CERT_FILE, which OpenSSL's default paths read), so a client
// that trusted the system bundle would accept this server.
TEST_F(HttpKubeClientTest, RefusesACertificateSignedByAnyOtherCa) {
  const std::filesystem::path bundle = std::filesystem::path(::testing::TempDir()) / "public.pem";
  std::ofstream(bundle) << other_ca_->cert_pem();
  ASSERT_EQ(setenv("SSL_CERT_FILE", bundle.c_str(), 1), 0);
  NodesServer server(ServerCert(*other_ca_, "127.0.0.1"));
  std::unique_ptr<KubeClient> client = ClientFor(server);
  ASSERT_NE(client, nullptr);
  absl::StatusOr<std::vector<KubeNode>> nodes = client->ListNodes();
  unsetenv("SSL_CERT_FILE");
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.status().code(), absl::StatusCode::kUnavailable) << nodes.status();
  EXPECT_TRUE(server.ports().empty()) << "no request may reach a server we do not trust";
}

TEST_F(HttpKubeClientTest, RefusesACertificateForAnotherHost) {
  NodesServer server(ServerCert(*cluster_ca_, "127.0.0.2"));
  std::unique_ptr<KubeClient> client = ClientFor(server);
  ASSERT_NE(client, nullptr);
  absl::StatusOr<std::vector<KubeNode>> nodes = client->ListNodes();
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.status().code(), absl::StatusCode::kUnavailable) << nodes.status();
  EXPECT_TRUE(server.ports().empty());
}

// The API server holds the answer; the process shuts down. The call ends Cancelled while the
// server still holds it (so not by a timeout), and later calls do not reach the server.
TEST_F(HttpKubeClientTest, ShutdownCancelsACallWaitingForItsAnswer) {
  NodesServer server(ServerCert(*cluster_ca_, "127.0.0.1"));
  server.Hold();
  std::stop_source shutdown;
  std::unique_ptr<KubeClient> client = ClientAt(server.url(), Patient(shutdown.get_token()));
  ASSERT_NE(client, nullptr);
  auto call = std::async(std::launch::async, [&] { return client->ListNodes(); });
  ASSERT_TRUE(server.WaitForRequests(1)) << "the request never came";
  shutdown.request_stop();
  ASSERT_EQ(call.wait_for(60s), std::future_status::ready)
      << "the call still waits for its answer after the shutdown";
  EXPECT_EQ(server.requests(), 1);
  server.Release();
  absl::StatusOr<std::vector<KubeNode>> nodes = call.get();
  EXPECT_EQ(nodes.status().code(), absl::StatusCode::kCancelled) << nodes.status();
  EXPECT_EQ(client->ListNodes().status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(client->SetUnschedulable("cp-0", true).code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(server.requests(), 1) << "a call after the shutdown reached the server";
}

// An API server that accepts the connection and never says a word: the call is stuck in the
// TLS handshake, where httplib's own stop would wait for the connect timeout.
TEST_F(HttpKubeClientTest, ShutdownCancelsACallStuckInTheHandshake) {
  test_support::Blackhole hole("127.0.0.1");
  ASSERT_TRUE(hole.ok());
  std::stop_source shutdown;
  std::unique_ptr<KubeClient> client =
      ClientAt("https://127.0.0.1:" + std::to_string(hole.port()), Patient(shutdown.get_token()));
  ASSERT_NE(client, nullptr);
  auto call = std::async(std::launch::async, [&] { return client->ListNodes(); });
  ASSERT_TRUE(hole.WaitAccepted(1)) << "the call never connected";
  EXPECT_EQ(hole.accepted(), 1);
  shutdown.request_stop();
  ASSERT_EQ(call.wait_for(60s), std::future_status::ready)
      << "the call still waits for the handshake after the shutdown";
  absl::StatusOr<std::vector<KubeNode>> nodes = call.get();
  EXPECT_EQ(nodes.status().code(), absl::StatusCode::kCancelled) << nodes.status();
}

TEST(HttpKubeClientConfigTest, ACaWithoutACertificateIsInvalid) {
  KubeCredentials credentials;
  credentials.server = "https://127.0.0.1:6443";
  credentials.ca_pem = "not a certificate";
  credentials.token = kToken;
  absl::StatusOr<std::unique_ptr<KubeClient>> client =
      NewHttpKubeClient(credentials, Env::Default());
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(HttpKubeClientTest, AnAnswerOverTheCapIsRefusedNamingIt) {
  EXPECT_EQ(HttpKubeClientOptions().max_answer_bytes, size_t{32} << 20);
  NodesServer server(ServerCert(*cluster_ca_, "127.0.0.1"));
  HttpKubeClientOptions options;
  options.connect_timeout = 5s;
  options.request_timeout = 5s;
  options.max_answer_bytes = 16;  // the server's node list is 41 bytes
  std::unique_ptr<KubeClient> capped = ClientAt(server.url(), options);
  ASSERT_NE(capped, nullptr);
  const absl::Status refused = capped->ListNodes().status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("kubernetes list nodes: the answer is "
                                                      "larger than the cap of 16 bytes"));
  EXPECT_EQ(server.requests(), 1) << "an answer over the cap is not asked for again";
  std::unique_ptr<KubeClient> client = ClientFor(server);  // the default cap reads it
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(client->ListNodes().ok());
}

}  // namespace
}  // namespace tr::reconciler::kube
