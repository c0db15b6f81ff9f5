// The health-gate probes (reconciler/operations/gates/probes.h) against real servers on loopback:
// an httplib server (plain and TLS with a certificate made by openssl) and a real Prometheus
// (Debian's `prometheus`) scraping a test exporter every second.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <thread>

#include "gitsource/subprocess.h"
#include "httplib.h"
#include "reconciler/operations/gates/probes.h"
#include "tests/support/loopback_http.h"
#include "tests/support/wait.h"

namespace tr::reconciler::gates {
namespace {

using test_support::FreePort;
using test_support::LoopbackServer;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gates-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void Write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

core::HealthCheck Http(const std::string& url) {
  core::HealthCheck c;
  c.name = "web";
  c.spec = core::HttpCheck{.endpoint = {.url = url, .ca_file = ""}, .expect_status = 200};
  c.timeout = std::chrono::seconds(5);
  return c;
}

class HttpProbeTest : public ::testing::Test {
 protected:
  HttpProbeTest() : server_(Routes()) {}
  ~HttpProbeTest() override {
    {
      std::lock_guard lock(mu_);
      release_ = true;
    }
    released_.notify_all();
  }
  std::unique_ptr<httplib::Server> Routes() {
    auto s = std::make_unique<httplib::Server>();
    s->Get("/healthz", [](const httplib::Request&, httplib::Response& r) { r.status = 200; });
    s->Get("/down", [](const httplib::Request&, httplib::Response& r) { r.status = 503; });
    s->Get("/teapot", [](const httplib::Request&, httplib::Response& r) { r.status = 418; });
    s->Get("/moved",
           [](const httplib::Request&, httplib::Response& r) { r.set_redirect("/healthz"); });
    s->Get("/hang", [this](const httplib::Request&, httplib::Response&) {
      std::unique_lock lock(mu_);
      released_.wait(lock, [this] { return release_; });
    });
    return s;
  }
  std::string Url(const std::string& path) {
    return "http://127.0.0.1:" + std::to_string(server_.port()) + path;
  }

  std::mutex mu_;
  std::condition_variable released_;
  bool release_ = false;
  LoopbackServer server_;
};

TEST_F(HttpProbeTest, HealthyOnlyOnTheExpectedStatus) {
  ProbeAnswer ok = ProbeHttp(Http(Url("/healthz")));
  EXPECT_TRUE(ok.healthy);
  EXPECT_EQ(ok.message, "HTTP 200");
  ProbeAnswer down = ProbeHttp(Http(Url("/down")));
  EXPECT_FALSE(down.healthy);
  EXPECT_EQ(down.message, "HTTP 503, expected 200");
  core::HealthCheck teapot = Http(Url("/teapot?x=1"));
  std::get<core::HttpCheck>(teapot.spec).expect_status = 418;
  EXPECT_TRUE(ProbeHttp(teapot).healthy);
}

TEST_F(HttpProbeTest, RedirectsAreNotFollowed) {
  ProbeAnswer a = ProbeHttp(Http(Url("/moved")));
  EXPECT_FALSE(a.healthy);
  EXPECT_EQ(a.message, "HTTP 302, expected 200 (redirect to /healthz not followed)");
}

TEST_F(HttpProbeTest, NoAnswerWithinTheTimeoutIsUnhealthy) {
  core::HealthCheck c = Http(Url("/hang"));
  c.timeout = std::chrono::seconds(1);
  ProbeAnswer a = ProbeHttp(c);
  EXPECT_FALSE(a.healthy);
  EXPECT_THAT(a.message, StartsWith("no answer: "));
}

TEST(HttpProbeRefusedTest, AClosedPortIsUnhealthy) {
  int port = 0;
  {
    LoopbackServer closed(std::make_unique<httplib::Server>());
    port = closed.port();
  }
  ProbeAnswer a = ProbeHttp(Http("http://127.0.0.1:" + std::to_string(port) + "/"));
  EXPECT_FALSE(a.healthy);
  EXPECT_THAT(a.message, StartsWith("no answer: "));
}

TEST(HttpsProbeTest, VerifiesTheServerAgainstCaFile) {
  TempDir dir;
  const auto key = dir.path() / "key.pem", cert = dir.path() / "cert.pem";
  gitsource::SpawnOptions req;
  req.argv = {"openssl", "req",          "-x509", "-newkey", "rsa:2048",
              "-nodes",  "-keyout",      key.string(), "-out", cert.string(),
              "-days",   "1",            "-subj",  "/CN=127.0.0.1", "-addext",
              "subjectAltName=IP:127.0.0.1"};
  auto openssl = gitsource::Subprocess::Spawn(req);
  ASSERT_TRUE(openssl.ok()) << openssl.status();
  ASSERT_EQ(openssl->Wait(), 0);
  auto tls = std::make_unique<httplib::SSLServer>(cert.c_str(), key.c_str());
  ASSERT_TRUE(tls->is_valid());
  tls->Get("/healthz", [](const httplib::Request&, httplib::Response& r) { r.status = 200; });
  LoopbackServer server(std::move(tls));
  core::HealthCheck c = Http("https://127.0.0.1:" + std::to_string(server.port()) + "/healthz");
  ProbeAnswer untrusted = ProbeHttp(c);
  EXPECT_FALSE(untrusted.healthy);
  EXPECT_THAT(untrusted.message, HasSubstr("certificate verification"));
  std::get<core::HttpCheck>(c.spec).endpoint.ca_file = cert.string();
  ProbeAnswer trusted = ProbeHttp(c);
  EXPECT_TRUE(trusted.healthy) << trusted.message;
  EXPECT_EQ(trusted.message, "HTTP 200");
}

// A free loopback port: bound, read, closed. Prometheus cannot report a port 0 choice.
// A real Prometheus scraping an exporter of ours every second; the test sets the gauge.
class PrometheusProbeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { world_ = new World(); }
  static void TearDownTestSuite() {
    delete world_;
    world_ = nullptr;
  }

  struct World {
    std::atomic<int> gauge{0};
    TempDir dir;
    LoopbackServer exporter{Exporter(gauge)};
    int port = 0;
    std::optional<gitsource::Subprocess> prometheus;

    static std::unique_ptr<httplib::Server> Exporter(std::atomic<int>& gauge) {
      auto s = std::make_unique<httplib::Server>();
      s->Get("/metrics", [&gauge](const httplib::Request&, httplib::Response& r) {
        r.set_content("# TYPE gate_test_errors gauge\ngate_test_errors " +
                          std::to_string(gauge.load()) + "\n",
                      "text/plain; version=0.0.4");
      });
      return s;
    }

    World() {
      Write(dir.path() / "prometheus.yml",
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            "  - job_name: gate\n"
            "    static_configs: [{targets: ['127.0.0.1:" +
                std::to_string(exporter.port()) + "']}]\n");
      for (int attempt = 0; attempt < 5 && !prometheus; ++attempt) Start();
    }

    // Starts Prometheus on a free port; keeps it once it answers on that port.
    void Start() {
      port = FreePort();
      prometheus = test_support::StartServerProcess(
          {"prometheus", "--config.file=" + (dir.path() / "prometheus.yml").string(),
           "--storage.tsdb.path=" + (dir.path() / "data").string(),
           "--web.listen-address=127.0.0.1:" + std::to_string(port)},
          port, "/-/ready", std::chrono::seconds(60));
    }
  };

  core::HealthCheck Query(const std::string& query, std::optional<double> max = 0) {
    core::HealthCheck c;
    c.name = "errors";
    c.spec = core::PrometheusCheck{
        .endpoint = {.url = "http://127.0.0.1:" + std::to_string(world_->port), .ca_file = ""},
        .query = query,
        .max_value = max};
    c.timeout = std::chrono::seconds(5);
    return c;
  }

  // Probes until the answer's health is `healthy`, for at most 30 s; the last answer.
  ProbeAnswer Until(const core::HealthCheck& check, bool healthy) {
    ProbeAnswer a;
    (void)test_support::WaitUntil(
        [&] {
          a = ProbePrometheus(check);
          return a.healthy == healthy;
        },
        std::chrono::seconds(30));
    return a;  // the caller asserts on it
  }

  static World* world_;
};
PrometheusProbeTest::World* PrometheusProbeTest::world_ = nullptr;

TEST_F(PrometheusProbeTest, FollowsTheGaugeAcrossScrapes) {
  ASSERT_TRUE(world_->prometheus.has_value()) << "prometheus did not start";
  world_->gauge = 0;
  ProbeAnswer a = Until(Query("gate_test_errors"), true);
  EXPECT_TRUE(a.healthy) << a.message;
  EXPECT_EQ(a.message, "value 0 <= max 0");
  world_->gauge = 3;
  a = Until(Query("gate_test_errors"), false);
  EXPECT_FALSE(a.healthy);
  EXPECT_EQ(a.message, "value 3 > max 0");
  EXPECT_TRUE(ProbePrometheus(Query("gate_test_errors", 5)).healthy);
  world_->gauge = 0;
  a = Until(Query("gate_test_errors"), true);
  EXPECT_TRUE(a.healthy) << a.message;
}

TEST_F(PrometheusProbeTest, AnythingButOneNumberIsUnhealthyAndSaysWhy) {
  ASSERT_TRUE(world_->prometheus.has_value()) << "prometheus did not start";
  EXPECT_EQ(ProbePrometheus(Query("gate_test_errors{job=\"absent\"}")).message, "no result");
  EXPECT_EQ(ProbePrometheus(Query("vector(1) or label_replace(vector(2), \"x\", \"y\", \"\", \"\")"))
                .message,
            "2 series, expected one");
  EXPECT_EQ(ProbePrometheus(Query("0/0")).message, "value is NaN");
  ProbeAnswer bad = ProbePrometheus(Query("sum("));
  EXPECT_FALSE(bad.healthy);
  EXPECT_THAT(bad.message, StartsWith("query error (bad_data): "));
  core::HealthCheck scalar = Query("scalar(vector(0.25))", std::nullopt);
  EXPECT_TRUE(ProbePrometheus(scalar).healthy);
  EXPECT_EQ(ProbePrometheus(scalar).message, "value 0.25");
}

TEST_F(PrometheusProbeTest, AServerThatIsNotPrometheusIsUnhealthy) {
  auto routes = std::make_unique<httplib::Server>();
  routes->Get("/api/v1/query", [](const httplib::Request&, httplib::Response& r) {
    r.set_content("<html>login</html>", "text/html");
  });
  LoopbackServer other(std::move(routes));
  core::HealthCheck c = Query("up");
  std::get<core::PrometheusCheck>(c.spec).endpoint.url =
      "http://127.0.0.1:" + std::to_string(other.port());
  ProbeAnswer a = ProbePrometheus(c);
  EXPECT_FALSE(a.healthy);
  EXPECT_EQ(a.message, "HTTP 200: not a Prometheus API answer: <html>login</html>");
}

// Answers of 2 MiB, over the probes' 1 MiB cap: a long `/page`, a long Prometheus answer.
TEST(ProbeAnswerCapTest, AnswersAreNotReadPastTheCap) {
  auto routes = std::make_unique<httplib::Server>();
  const std::string big(size_t{2} << 20, ' ');
  routes->Get("/page", [&](const httplib::Request&, httplib::Response& r) {
    r.set_content(big, "text/plain");
  });
  routes->Get("/api/v1/query", [&](const httplib::Request&, httplib::Response& r) {
    r.set_content(R"({"status":"success","data":{"resultType":"scalar","result":[0,"1"]}})" + big,
                  "application/json");
  });
  LoopbackServer server(std::move(routes));
  const std::string origin = "http://127.0.0.1:" + std::to_string(server.port());
  // The http probe needs the status only.
  ProbeAnswer page = ProbeHttp(Http(origin + "/page"));
  EXPECT_TRUE(page.healthy);
  EXPECT_EQ(page.message, "HTTP 200, answer not read past 1048576 bytes");
  core::HealthCheck query;
  query.name = "errors";
  query.spec =
      core::PrometheusCheck{.endpoint = {.url = origin, .ca_file = ""}, .query = "up", .max_value = {}};
  query.timeout = std::chrono::seconds(5);
  ProbeAnswer refused = ProbePrometheus(query);
  EXPECT_FALSE(refused.healthy);
  EXPECT_EQ(refused.message,
            "prometheus query: the answer is larger than the cap of 1048576 bytes (1 MiB)");
}

}  // namespace
}  // namespace tr::reconciler::gates
