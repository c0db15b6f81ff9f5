// An idle client closes its connections after `idle_timeout` and opens them again on the next
// call, so a cluster with nothing in flight holds no connection between its resyncs.
#include <gmock/gmock.h>

#include "reconciler/clients/talos/grpc_talos_client_impl.h"
#include "tests/support/sim_fixture.h"
#include "tests/support/wait.h"

namespace tr::reconciler::talos {
namespace {

using namespace std::chrono_literals;

class ClientIdleTest : public SimTest {};

TEST_F(ClientIdleTest, AnIdleClientClosesItsConnectionsAndReopensThemOnTheNextCall) {
  ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("v1.11.6", "v1.11.6")));
  TalosContext context;
  ASSERT_NO_FATAL_FAILURE(LoadContext("prod", "os:admin", &context));
  GrpcTalosClientOptions options = TestClientOptions();
  options.idle_timeout = 1s;
  auto made = NewGrpcTalosClient(context, Env::Default(), options);
  ASSERT_TRUE(made.ok()) << made.status();
  auto* grpc_client = dynamic_cast<GrpcTalosClient*>(made->get());
  ASSERT_NE(grpc_client, nullptr);
  const std::string node = Address("w-1");

  // Unary calls and server streams (BootId reads a file, Kubeconfig streams a tarball).
  ASSERT_TRUE(grpc_client->Version(node).ok());
  ASSERT_TRUE(grpc_client->BootId(node).ok());
  ASSERT_TRUE(grpc_client->GetMachineStatus(node).ok());
  ASSERT_TRUE(grpc_client->EtcdStatus(Address("cp-1")).ok());
  ASSERT_TRUE(grpc_client->Kubeconfig(Address("cp-1")).ok());
  EXPECT_GE(grpc_client->ConnectedEndpoints(), 1u);
  EXPECT_TRUE(test_support::WaitUntil([&] { return grpc_client->ConnectedEndpoints() == 0; }, 60s))
      << "still connected after the idle timeout";

  absl::StatusOr<NodeVersion> again = grpc_client->Version(node);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->tag, "v1.11.6");
  EXPECT_GE(grpc_client->ConnectedEndpoints(), 1u);
}

}  // namespace
}  // namespace tr::reconciler::talos
