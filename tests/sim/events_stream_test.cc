// MachineService/Events as the simulator's own cost: an open stream holds no thread of it (the
// stream is served on gRPC's callback API, events_stream.cc), directly and forwarded by apid,
// and a caller's cancel ends the stream on the node's side.
#include <gtest/gtest.h>

#include <filesystem>

#include "machine/machine.grpc.pb.h"
#include "tests/sim/fleet.h"
#include "tests/sim/test_client.h"

namespace tr::sim {
namespace {

using testing::Call;
using namespace std::chrono_literals;

constexpr const char* kEventsStreamFleet = R"(
time_scale: 0.002
clusters:
  - name: prod
    nodes:
      - {name: cp-1, role: controlplane, talos: v1.11.6, kubernetes: 1.34.1}
      - {name: w-1, role: worker, talos: v1.12.5, kubernetes: 1.34.1}
)";

// The threads of this process, the in-process fleet's among them.
int ThreadCount() {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++n;
  }
  return n;
}

struct OpenEvents {
  std::unique_ptr<grpc::ClientContext> ctx;
  std::unique_ptr<grpc::ClientReader<machine::Event>> reader;
};

class EventsStreamTest : public testing::ProdFleetTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartProdFleet(kEventsStreamFleet, "sim-events"));
  }
  // A stream whose hello arrived, so the node serves it; `node` empty: the endpoint itself.
  OpenEvents Open(const std::string& node) {
    OpenEvents s{Call(node, 120s), nullptr};
    s.reader = machine_->Events(s.ctx.get(), {});
    machine::Event hello;
    EXPECT_TRUE(s.reader->Read(&hello));
    return s;
  }
};

size_t CancelledEventsCalls(const std::vector<JournalEntry>& entries) {
  size_t n = 0;
  for (const auto& e : entries) {
    n += e.what == "/machine.MachineService/Events" && e.code == "CANCELLED";
  }
  return n;
}

TEST_F(EventsStreamTest, OpenStreamsHoldNoThreadAndAllEndWhenTheEndpointGoesDown) {
  std::vector<OpenEvents> streams;
  streams.push_back(Open(""));
  const int with_one = ThreadCount();
  // Half on the endpoint, half forwarded to the worker by the endpoint's apid.
  const std::string worker = Addr("w-1");
  for (int i = 1; i < 200; ++i) streams.push_back(Open(i % 2 == 0 ? "" : worker));
  const int with_many = ThreadCount();
  // A thread per stream would be 199 more; gRPC's own pools may grow by a few.
  EXPECT_LE(with_many, with_one + 16) << "with 1 open stream: " << with_one;

  auto ctx = Call();
  machine::RebootResponse rebooted;
  ASSERT_TRUE(machine_->Reboot(ctx.get(), {}, &rebooted).ok());
  for (auto& s : streams) {
    machine::Event ev;
    while (s.reader->Read(&ev)) {
    }
    EXPECT_EQ(s.reader->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  }
}

TEST_F(EventsStreamTest, ACancelledStreamEndsOnTheNode) {
  std::vector<OpenEvents> streams;
  for (int i = 0; i < 20; ++i) streams.push_back(Open(i % 2 == 0 ? "" : Addr("w-1")));
  for (auto& s : streams) s.ctx->TryCancel();
  for (auto& s : streams) EXPECT_EQ(s.reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  // The node journals a stream when it ends, so each was ended there.
  const auto all_ended = [](const std::vector<JournalEntry>& entries) {
    return CancelledEventsCalls(entries) == 20;
  };
  EXPECT_TRUE(fleet_->journal().WaitFor(all_ended, 60s).ok())
      << CancelledEventsCalls(fleet_->journal().Entries()) << " of 20 streams ended";
}

}  // namespace
}  // namespace tr::sim
