// The arguments every channel to a Talos endpoint is made with (TalosChannelArguments).
#include <gmock/gmock.h>
#include <grpc/grpc.h>

#include <map>
#include <string>

#include "reconciler/clients/talos/grpc_talos_client_impl.h"

namespace tr::reconciler::talos {
namespace {

using namespace std::chrono_literals;

// The integer arguments by key, as gRPC reads them.
std::map<std::string, int> IntegerArguments(const grpc::ChannelArguments& args) {
  grpc_channel_args c_args{};
  args.SetChannelArgs(&c_args);
  std::map<std::string, int> found;
  for (size_t i = 0; i < c_args.num_args; ++i) {
    if (c_args.args[i].type == GRPC_ARG_INTEGER) {
      found[c_args.args[i].key] = c_args.args[i].value.integer;
    }
  }
  return found;
}

TEST(TalosChannelArgumentsTest, AFixedReceiveWindowReplacesTheBdpProbe) {
  const std::map<std::string, int> args = IntegerArguments(TalosChannelArguments({}));
  ASSERT_TRUE(args.contains(GRPC_ARG_HTTP2_BDP_PROBE));
  EXPECT_EQ(args.at(GRPC_ARG_HTTP2_BDP_PROBE), 0);
  ASSERT_TRUE(args.contains(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES));
  EXPECT_EQ(args.at(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES), kStreamWindowBytes);
  // Larger than gRPC's default window (64 KiB) by far, and smaller than the largest message.
  EXPECT_GE(kStreamWindowBytes, 1 << 20);
  EXPECT_LT(kStreamWindowBytes, GrpcTalosClientOptions{}.max_receive_message_bytes);
}

TEST(TalosChannelArgumentsTest, TheOptionsReachTheirArguments) {
  GrpcTalosClientOptions options;
  options.max_receive_message_bytes = 1234567;
  options.max_reconnect_backoff = 7s;
  options.idle_timeout = 90s;
  const std::map<std::string, int> args = IntegerArguments(TalosChannelArguments(options));
  EXPECT_EQ(args.at(GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH), 1234567);
  EXPECT_EQ(args.at(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS), 7000);
  EXPECT_EQ(args.at(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS), 1000);
  EXPECT_EQ(args.at(GRPC_ARG_CLIENT_IDLE_TIMEOUT_MS), 90000);
}

}  // namespace
}  // namespace tr::reconciler::talos
