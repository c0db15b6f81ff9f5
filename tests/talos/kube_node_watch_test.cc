// HttpKubeClient's watch of Nodes against talos-sim's fake Kubernetes API (HTTPS, the
// kubeconfig's CA and token): list, then watch from the list's resourceVersion, as informers do.
#include <gmock/gmock.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "tests/support/sim_fixture.h"

namespace tr::reconciler::talos {
namespace {

using kube::NodeWatchEvent;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// The events a watch running on its own thread has handed on, and how it ended.
class WatchRun {
 public:
  WatchRun(kube::KubeClient& kube, const std::string& version, std::chrono::seconds timeout)
      : thread_([this, &kube, version, timeout](std::stop_token stop) {
          absl::Status end = kube.WatchNodes(version, timeout, stop, [this](const auto& event) {
            std::lock_guard lock(mu_);
            events_.push_back(event);
            changed_.notify_all();
            return !enough_;
          });
          std::lock_guard lock(mu_);
          end_ = std::move(end);
          changed_.notify_all();
        }) {}

  // Waits (at most 20 s) for an event `match` takes, at index `from` or later.
  std::optional<NodeWatchEvent> Next(size_t& from,
                                     const std::function<bool(const NodeWatchEvent&)>& match) {
    std::unique_lock lock(mu_);
    std::optional<NodeWatchEvent> found;
    changed_.wait_for(lock, 20s, [&] {
      for (; from < events_.size(); ++from) {
        if (match(events_[from])) {
          found = events_[from++];
          return true;
        }
      }
      return end_.has_value();
    });
    return found;
  }
  // How the watch ended (waits at most 20 s; nullopt when it had not).
  std::optional<absl::Status> End() {
    std::unique_lock lock(mu_);
    changed_.wait_for(lock, 20s, [&] { return end_.has_value(); });
    return end_;
  }
  void Stop() { thread_.request_stop(); }
  // The next event handed on ends the watch by the callback's false.
  void Enough() {
    std::lock_guard lock(mu_);
    enough_ = true;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<NodeWatchEvent> events_;
  std::optional<absl::Status> end_;
  bool enough_ = false;
  std::jthread thread_;  // last: joined before the rest goes
};

std::function<bool(const NodeWatchEvent&)> Modified(const std::string& node, bool unschedulable) {
  return [=](const NodeWatchEvent& e) {
    return e.type == NodeWatchEvent::Type::kModified && e.node.name == node &&
           e.node.unschedulable == unschedulable;
  };
}

class KubeNodeWatchTest : public SimTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartFleet(ThreeNodeFleet("v1.13.2", "v1.13.2")));
    ASSERT_NO_FATAL_FAILURE(NewKubeClient("prod", &kube_));
    absl::StatusOr<kube::VersionedNodes> listed = kube_->ListNodesVersioned();
    ASSERT_TRUE(listed.ok()) << listed.status();
    ASSERT_EQ(listed->nodes.size(), 4u);
    ASSERT_FALSE(listed->resource_version.empty());
    listed_ = listed->resource_version;
  }
  void TearDown() override {
    kube_.reset();  // its kept-alive connection would hold the server's stop
    SimTest::TearDown();
  }
  std::unique_ptr<kube::KubeClient> kube_;
  std::string listed_;
};

TEST_F(KubeNodeWatchTest, AWatchFromTheListSeesEachWriteInOrderAndStopsWhenAsked) {
  WatchRun watch(*kube_, listed_, 60s);
  ASSERT_TRUE(kube_->SetUnschedulable("w-1", true).ok());
  ASSERT_TRUE(kube_->SetUnschedulable("w-1", false).ok());
  size_t at = 0;
  const auto cordoned = watch.Next(at, Modified("w-1", true));
  ASSERT_TRUE(cordoned.has_value()) << "the cordon was not seen";
  const auto uncordoned = watch.Next(at, Modified("w-1", false));
  ASSERT_TRUE(uncordoned.has_value()) << "the uncordon was not seen";
  EXPECT_LT(std::stoull(listed_), std::stoull(cordoned->resource_version));
  EXPECT_LT(std::stoull(cordoned->resource_version), std::stoull(uncordoned->resource_version));
  // Bookmarks keep a quiet watch alive and carry where to watch again from.
  const auto mark = watch.Next(
      at, [](const NodeWatchEvent& e) { return e.type == NodeWatchEvent::Type::kBookmark; });
  ASSERT_TRUE(mark.has_value()) << "no bookmark";
  EXPECT_GE(std::stoull(mark->resource_version), std::stoull(uncordoned->resource_version));

  watch.Stop();
  const auto end = watch.End();
  ASSERT_TRUE(end.has_value()) << "the watch did not stop";
  EXPECT_TRUE(absl::IsCancelled(*end)) << *end;
}

TEST_F(KubeNodeWatchTest, TheCallersFalseAndTheServersTimeoutEndItOk) {
  WatchRun quits(*kube_, listed_, 60s);
  quits.Enough();
  ASSERT_TRUE(kube_->SetUnschedulable("w-1", true).ok());
  auto end = quits.End();
  ASSERT_TRUE(end.has_value());
  EXPECT_TRUE(end->ok()) << *end;

  WatchRun timed(*kube_, listed_, 1s);
  end = timed.End();
  ASSERT_TRUE(end.has_value()) << "the server did not end the watch at timeoutSeconds";
  EXPECT_TRUE(end->ok()) << *end;
}

TEST_F(KubeNodeWatchTest, AVersionTheServerNoLongerHasIsOutOfRange) {
  WatchRun watch(*kube_, "1", 60s);
  const auto end = watch.End();
  ASSERT_TRUE(end.has_value());
  EXPECT_TRUE(absl::IsOutOfRange(*end)) << *end;
  EXPECT_THAT(std::string(end->message()), HasSubstr("too old resource version: 1 ("));
  EXPECT_THAT(std::string(end->message()), HasSubstr("list the nodes again"));
}

}  // namespace
}  // namespace tr::reconciler::talos
