// The handshake diagnosis of tls_material.h ends when it is stopped: the daemon runs it (when
// no node of a cluster answers), and SIGTERM must not wait for its connect timeout.
#include "reconciler/talos/tls_material.h"

#include <gtest/gtest.h>

#include <future>

#include "tests/support/blackhole.h"
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
  ASSERT_TRUE(test_support::WaitUntil([&] { return hole.accepted() > 0; }));
  stop.request_stop();
  // Far below the ten minutes it would otherwise wait (no claim on how fast).
  ASSERT_EQ(diagnosis.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_EQ(diagnosis.get().code(), absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace tr::reconciler::talos
