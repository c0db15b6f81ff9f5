// The handshake diagnosis of tls_material.h ends when it is stopped: the daemon runs it (when
// no node of a cluster answers), and SIGTERM must not wait for its connect timeout. The client
// certificate's expiry read as openssl's own command line reads it.
#include "reconciler/clients/talos/tls_material.h"

#include <gtest/gtest.h>

#include <ctime>
#include <future>
#include <iomanip>
#include <sstream>

#include "tests/support/blackhole.h"
#include "tests/support/process.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/wait.h"

namespace tr::reconciler::talos {
namespace {

using TlsMaterialTest = SimTest;

TEST_F(TlsMaterialTest, HandshakeDiagnosisEndsWhenStopped) {
  ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("1.11.6", "1.11.6")));
  TalosContext context;
  ASSERT_NO_FATAL_FAILURE(LoadContext("prod", "os:admin", &context));
  // An endpoint that takes the connection and never answers the handshake.
  const std::string cp = Address("cp-1");
  const std::string host = cp.substr(0, cp.rfind('.')) + ".242";
  test_support::Blackhole hole(host);
  const Endpoint endpoint{host, static_cast<uint16_t>(hole.port())};
  std::stop_source stop;
  auto diagnosis = std::async(std::launch::async, [&] {
    return DiagnoseHandshake(context, endpoint, std::chrono::minutes(10), stop.get_token());
  });
  ASSERT_TRUE(hole.WaitAccepted(1));
  stop.request_stop();
  // Far below the ten minutes it would otherwise wait (no claim on how fast).
  ASSERT_EQ(diagnosis.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_EQ(diagnosis.get().code(), absl::StatusCode::kCancelled);
}

// A certificate of 45 days made by openssl req; its notAfter as `openssl x509 -enddate` prints it.
TEST(CertificateExpiryTest, NotAfterIsTheOneOpensslReads) {
  gitsource::testing::TempDir dir;
  gitsource::testing::MustRun({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                               "ec_paramgen_curve:prime256v1", "-nodes", "-days", "45", "-subj",
                               "/O=os:admin", "-keyout", (dir / "key.pem").string(), "-out",
                               (dir / "crt.pem").string()});
  const std::string end = gitsource::testing::MustRun(
      {"openssl", "x509", "-in", (dir / "crt.pem").string(), "-noout", "-enddate", "-dateopt",
       "iso_8601"});
  // notAfter=2027-01-16 04:20:00Z
  std::tm tm{};
  std::istringstream in(end.substr(end.find('=') + 1));
  in >> std::get_time(&tm, "%Y-%m-%d %H:%M:%S");
  ASSERT_FALSE(in.fail()) << end;
  const auto expected = std::chrono::system_clock::from_time_t(timegm(&tm));

  const absl::StatusOr<std::chrono::system_clock::time_point> not_after =
      CertificateNotAfter(gitsource::testing::ReadFile(dir / "crt.pem"));
  ASSERT_TRUE(not_after.ok()) << not_after.status();
  EXPECT_EQ(*not_after, expected);
  EXPECT_EQ(CertificateNotAfter("not a certificate").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tr::reconciler::talos
